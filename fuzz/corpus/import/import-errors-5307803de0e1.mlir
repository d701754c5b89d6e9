shard.grid @grid(shape = ?)
