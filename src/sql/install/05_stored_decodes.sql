-- shardid install script, part 05: stored decodes keep the layout frozen.
--
-- The decoders are IMMUTABLE (part 00), so indexes, generated columns,
-- constraints and materialized views may store what they compute. Those
-- values depend on the layout, so configure() refuses a change while any of
-- them exists (found through pg_depend), and a layout row that arrives after
-- the rows (pg_dump restores shardid.layout_config after the tables of
-- schemas that sort before "shardid") recomputes the stored generated
-- columns and rechecks the constraints that were computed with the default.
\ir ../views/stored_decodes.sql
\ir ../functions/_refuse_stored_decodes.sql
\ir ../functions/_layout_stored_decodes.sql
