shard.grid @grid(shape = 2x?)
