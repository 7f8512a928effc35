-- shardid install script, part 10: the generator.
\ir ../functions/next_id.sql
\ir ../views/_next_id_defaults.sql
\ir ../functions/_state_decode.sql
