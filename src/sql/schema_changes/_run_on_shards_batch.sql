-- run_on_shards() on a node, one batch, in one transaction (the caller's
-- connection commits it): the command on the template (with_template, for
-- what is not a read: new shards are made from it) and on each listed
-- shard's copy, in order, each as the copy's owner in a security-
-- restricted operation (_run_as_owner, the one fence: the owner's code a
-- statement reaches, a function a read calls, has the owner's rights and
-- cannot change the role back; a read runs read-only, _run_as_owner_read,
-- so a function it calls may not write). as_role, when given, is the role the
-- statements are for (the caller's current_user, on a loopback connection
-- that is the caller's session user): a copy whose owner's privileges it
-- lacks is not run. One row per target: shard (NULL: the template),
-- whether it succeeded, and the result: a read's first value, the command
-- tag, or the error with its SQLSTATE (a copy's error does not stop the
-- others). After a GRANT or REVOKE, the shards' schemas and generators
-- get the USAGE the templates' grants need (_align_privileges, the batch
-- at once; after a REVOKE, USAGE nothing needs is revoked); a shard that
-- fails it has its error in its copy's row.
-- optional: nothing to do on a node with neither the template
-- nor a shard (_run_on_shards_start). Executable by PUBLIC (it checks the
-- caller; a loopback connection may be a table owner's).
CREATE OR REPLACE FUNCTION shardid_internal._run_on_shards_batch(template text, command text, shards integer[],
                                                                 with_template boolean, as_role name DEFAULT NULL,
                                                                 optional boolean DEFAULT false)
    RETURNS TABLE (shard integer, success boolean, result text)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    s     record;
    x     record;
    rel   regclass;
    owner oid;
    r     text;
    stmt  text;
    st    text;
    msg   text;
    -- the rows, kept until the batch's privileges have followed
    o_shard   integer[] := '{}';
    o_success boolean[] := '{}';
    o_result  text[] := '{}';
    i     integer;
BEGIN
    s := shardid_internal._run_on_shards_start(template, command, as_role, optional);
    IF (s.t).table_name IS NULL THEN
        RETURN;
    END IF;
    FOR x IN SELECT NULL::integer AS shard, (s.t).template_schema AS schema_name, (s.t).template_name AS table_name,
                    true AS registered, 0::bigint AS ord
              WHERE with_template AND NOT s.reads
             UNION ALL
             SELECT u.s, g.schema_name, (s.t).table_name, g.shard IS NOT NULL, u.o
               FROM unnest(shards) WITH ORDINALITY AS u(s, o)
               LEFT JOIN shardid.shard_registry AS g ON g.shard = u.s
             ORDER BY ord LOOP
        shard := x.shard;
        success := false;
        rel := CASE WHEN x.registered THEN to_regclass(format('%I.%I', x.schema_name, x.table_name)) END;
        SELECT c.relowner INTO owner FROM pg_class AS c WHERE c.oid = rel;
        IF NOT x.registered THEN
            result := format('shard %s is not registered on this node (SQLSTATE 42704)', x.shard);
        ELSIF rel IS NULL THEN
            result := format('relation %I.%I does not exist (SQLSTATE 42P01)', x.schema_name, x.table_name);
        ELSIF as_role IS NOT NULL AND NOT pg_has_role(as_role, owner, 'USAGE') THEN
            result := format('permission denied to run a statement as role %I, the owner of %s (SQLSTATE 42501)',
                             pg_get_userbyid(owner), rel);
        ELSE
            BEGIN
                stmt := (shardid_internal._run_on_shards_check(command, x.schema_name, x.table_name)).statement;
                -- a read runs read-only: it may not write through a function
                r := CASE WHEN s.reads THEN shardid_internal._run_as_owner_read(owner::regrole, stmt)
                          ELSE shardid_internal._run_as_owner(owner::regrole, stmt) END;
                success := true;
                result := CASE WHEN s.reads THEN r ELSE s.kind END;
            EXCEPTION WHEN OTHERS THEN
                GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
                result := format('%s (SQLSTATE %s)', msg, st);
            END;
        END IF;
        o_shard := o_shard || shard; o_success := o_success || success; o_result := o_result || result;
    END LOOP;
    -- privileges follow the shards: after a GRANT or REVOKE, the schemas'
    -- and generators' USAGE the templates' grants need (tidied after a
    -- REVOKE), for the batch at once; if that fails, shard by shard, a
    -- shard's error in its row
    IF s.kind IN ('GRANT', 'REVOKE') THEN
        BEGIN
            PERFORM shardid_internal._align_privileges(
                ARRAY(SELECT o_shard[k] FROM generate_subscripts(o_shard, 1) AS k WHERE o_success[k] AND o_shard[k] IS NOT NULL),
                NULL, true, s.kind = 'REVOKE', as_role);
        EXCEPTION WHEN OTHERS THEN
            FOR i IN 1 .. cardinality(o_shard) LOOP
                CONTINUE WHEN o_shard[i] IS NULL OR NOT o_success[i];
                BEGIN
                    PERFORM shardid_internal._align_privileges(ARRAY[o_shard[i]], NULL, true, s.kind = 'REVOKE', as_role);
                EXCEPTION WHEN OTHERS THEN
                    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
                    o_success[i] := false;
                    o_result[i] := format('%s (SQLSTATE %s)', msg, st);
                END;
            END LOOP;
        END;
    END IF;
    FOR i IN 1 .. cardinality(o_shard) LOOP
        shard := o_shard[i];
        success := o_success[i];
        result := o_result[i];
        RETURN NEXT;
    END LOOP;
END
$$;

COMMENT ON FUNCTION shardid_internal._run_on_shards_batch(text, text, integer[], boolean, name, boolean) IS
    'Internal: run_on_shards() on a node, one batch in one transaction: the command on the template (not for a read) and each listed shard''s copy, each as the copy''s owner in the fence (_run_as_owner; a read read-only, _run_as_owner_read); a row per target with success and result (a read''s value, the command tag, or the error and its SQLSTATE). Executable by PUBLIC (it checks the caller).';
