-- What undoes one apply_ddl() statement, read by PostgreSQL's parser
-- (src/pg/ddl_inverse.cpp), for abandon_ddl(template, undo => true):
-- inverse is DROP INDEX (a CREATE INDEX), DROP CONSTRAINT (a named ADD
-- CONSTRAINT), SET DEFAULT or SET STATISTICS (the previous value of
-- column object_name), NULL when the statement has none; what names the
-- statement's change in words (ADD COLUMN, ALTER COLUMN TYPE, ...).
CREATE OR REPLACE FUNCTION shardid_internal._ddl_inverse(statement text, OUT inverse text, OUT object_name text, OUT what text)
    LANGUAGE c STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_ddl_inverse';

COMMENT ON FUNCTION shardid_internal._ddl_inverse(text) IS
    'abandon_ddl(undo): parses one apply_ddl() statement and says what undoes it (DROP INDEX, DROP CONSTRAINT, the previous SET DEFAULT or SET STATISTICS of a column; NULL: no safe inverse), the object it names, and the change in words.';
