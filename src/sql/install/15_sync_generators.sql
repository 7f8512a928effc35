-- shardid install script, part 15: generators raised above rows that
-- arrived without them (logical replication, a data restore).
\ir ../functions/_raise_generator.sql
\ir ../functions/sync_generators.sql
