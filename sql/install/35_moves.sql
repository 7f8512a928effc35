-- shardid install script, part 35: shard moves as SQL on the router.
\ir ../functions/move_shard.sql
\ir ../functions/abort_move.sql
