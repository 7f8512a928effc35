-- Every column DEFAULT that calls shardid.next_id(), with the generator it
-- names, for _generator_states(), sync_generators() and
-- _refuse_issued_layout(): the catalog query that finds generators without
-- the shard registry, written once. A DEFAULT depends on the function and on
-- its sequence (a regclass constant); seq is every pg_class object the
-- DEFAULT depends on (its own table too), so readers keep the sequences
-- (relkind 'S'). The shard is read from the DEFAULT's text (NULL unless it
-- is a literal). It is in common/ (the layout freeze reads it, before the
-- generator is installed), so it names next_id() by to_regprocedure() at
-- run time rather than by a regprocedure constant that needs the function
-- first.
--
-- A view, not a function: the planner inlines it into each query, which
-- then plans as if the joins were written there (a SQL function with SET
-- search_path or SECURITY DEFINER would not be inlined). It shows only what
-- pg_catalog shows everyone (pg_attrdef, pg_depend, pg_get_expr()), so
-- PUBLIC may read it: sync_generators() runs as its caller.
CREATE OR REPLACE VIEW shardid_internal._next_id_defaults AS
SELECT d.adrelid AS rel,
       d.adnum AS attnum,
       sdep.refobjid AS seq,
       pg_catalog.substring(pg_catalog.pg_get_expr(d.adbin, d.adrelid),
                            '^shardid\.next_id\((-?[0-9]+),')::integer AS shard
  FROM pg_catalog.pg_attrdef AS d
  JOIN pg_catalog.pg_depend AS fdep
    ON fdep.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_attrdef'::pg_catalog.regclass
   AND fdep.objid OPERATOR(pg_catalog.=) d.oid
   AND fdep.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
   AND fdep.refobjid OPERATOR(pg_catalog.=) pg_catalog.to_regprocedure('shardid.next_id(integer, pg_catalog.regclass)')
  JOIN pg_catalog.pg_depend AS sdep
    ON sdep.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_attrdef'::pg_catalog.regclass
   AND sdep.objid OPERATOR(pg_catalog.=) d.oid
   AND sdep.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass;

GRANT SELECT ON shardid_internal._next_id_defaults TO PUBLIC;

COMMENT ON VIEW shardid_internal._next_id_defaults IS
    'Internal (for _generator_states(), sync_generators() and _refuse_issued_layout()): every column DEFAULT that calls shardid.next_id(), its table, column, the pg_class objects it depends on (seq: keep relkind S) and its literal shard. Readable by PUBLIC: it shows only what pg_catalog shows everyone.';
