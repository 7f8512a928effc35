-- shardid install script, part 00: the layout and the decoders.
-- Every object is schema-qualified so a hostile search_path cannot hijack it.

\echo Use "CREATE EXTENSION shardid" to load this file. \quit
\ir ../checks/extension_schema.sql
\ir ../schemas/shardid_internal.sql
\ir ../functions/_fit_name.sql
\ir ../tables/layout_config.sql
\ir ../tables/ids_issued.sql
\ir ../tables/layout_freeze.sql
\ir ../functions/_layout_changed.sql
\ir ../functions/_refuse_freeze_reset.sql
\ir ../functions/_refuse_issued_layout.sql
\ir ../functions/_refuse_layout_rewrite.sql
\ir ../functions/_check_layout.sql
\ir ../types/layout_report.sql
\ir ../functions/layout.sql
\ir ../functions/configure.sql
\ir ../functions/id_time.sql
\ir ../functions/id_shard.sql
\ir ../functions/id_seq.sql
\ir ../functions/id_decode.sql
\ir ../functions/make_id.sql
\ir ../functions/time_to_id.sql
\ir ../functions/to_shortcode.sql
\ir ../functions/from_shortcode.sql

GRANT USAGE ON SCHEMA shardid TO PUBLIC;
