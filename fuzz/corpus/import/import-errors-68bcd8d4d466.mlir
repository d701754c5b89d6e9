shard.grid @a(shape = 2)
shard.grid @b(shape = 2)
