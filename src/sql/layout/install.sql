-- shardid, area layout: the layout of an ID (epoch, shard bits, sequence
-- bits), its decoders, and what keeps the layout frozen.
--
-- Stored decodes: the decoders are IMMUTABLE, so indexes, generated
-- columns, constraints and materialized views may store what they compute.
-- Those values depend on the layout, so configure() refuses a change while
-- any of them exists (found through pg_depend), and a layout row that
-- arrives after the rows (pg_dump restores shardid.layout_config after the
-- tables of schemas that sort before "shardid") recomputes the stored
-- generated columns and rechecks the constraints that were computed with
-- the default. Once an ID is issued the layout no longer changes
-- (_refuse_issued_layout).

\ir layout_config.sql
\ir ids_issued.sql
\ir layout_freeze.sql
\ir _layout_changed.sql
\ir _refuse_freeze_reset.sql
\ir _refuse_issued_layout.sql
\ir _refuse_layout_rewrite.sql
\ir _require_layout.sql
\ir layout_report.sql
\ir layout.sql
\ir configure.sql
\ir id_time.sql
\ir id_shard.sql
\ir id_seq.sql
\ir id_decode.sql
\ir make_id.sql
\ir time_to_id.sql
\ir to_shortcode.sql
\ir from_shortcode.sql
\ir stored_decodes.sql
\ir _refuse_stored_decodes.sql
\ir _layout_stored_decodes.sql
