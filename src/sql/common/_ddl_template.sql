-- apply_ddl(): the statement for one table (src/pg/ddl_template.cpp): the
-- command with each %s that stands outside literals, quoted identifiers
-- and comments replaced by the table's qualified name (%s_suffix: an
-- index named after it, quoted as one name), and %% by %; the parse tree
-- must have the table's name (or the index's) exactly there. 22023 for a
-- command without %s, with %s in a literal, a quoted identifier or where
-- the statement does not name its table; 42601 for an unterminated quote.
CREATE OR REPLACE FUNCTION shardid_internal._ddl_template(command text, schema_name name, table_name name) RETURNS text
    LANGUAGE c IMMUTABLE STRICT AS 'MODULE_PATHNAME', 'shardid_ddl_template';

COMMENT ON FUNCTION shardid_internal._ddl_template(text, name, name) IS
    'apply_ddl(): the command for one table, %s replaced by the parser''s rules (only outside literals, quoted identifiers and comments, only where the statement names the table or an index named after it, %s_suffix); 22023 or 42601 otherwise.';
