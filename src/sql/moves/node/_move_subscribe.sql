-- Node, target of a move: the subscription that copies the shard, made
-- unless it exists, reading the slot the source already has (_move_publish)
-- with copy_data, and disabled at its first error (disable_on_error), so a
-- failing copy shows at once instead of retrying forever. An existing one
-- that is disabled is enabled again: _move_copy calls this again when the
-- subscription stopped because its source restarted or failed over.
--
-- Who the copy runs as. Logical replication fires the table's ENABLE ALWAYS
-- and ENABLE REPLICA triggers, and evaluates its CHECK constraints, index
-- expressions and generated columns, so code written by the shard's owner
-- runs during the copy. It must not run as a superuser:
--   16 and later: the apply and table-sync workers switch to each table's
--     owner (run_as_owner = false, the default, said here explicitly);
--   15: they run as the subscription's owner, so the subscription belongs
--     to a role made for this move (named like the subscription, with no
--     password, no superuser, no membership in any role; LOGIN, which the
--     workers' connection needs) that holds just SELECT,
--     INSERT, UPDATE, DELETE and TRUNCATE on the shard's tables and USAGE
--     on its schema. 15 lets only a superuser own a subscription, so the
--     role is a superuser while it is given the subscription, and no longer
--     when the transaction that enables the subscription commits.
-- Returns the subscription's OID and this node's system identifier (the
-- names of the table-sync slots on the source) and the role (15), or NULL.
CREATE OR REPLACE FUNCTION shardid_internal._move_subscribe(name name, conninfo text, schema_name name) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    SET client_min_messages = warning
AS $$
DECLARE
    own_role boolean := current_setting('server_version_num')::integer < 160000;
BEGIN
    IF NOT EXISTS (SELECT FROM pg_subscription AS s WHERE s.subname = _move_subscribe.name) THEN
        IF own_role THEN
            IF NOT EXISTS (SELECT FROM pg_roles AS r WHERE r.rolname = _move_subscribe.name) THEN
                EXECUTE format('CREATE ROLE %I LOGIN NOINHERIT SUPERUSER PASSWORD NULL', name);
            ELSE
                EXECUTE format('ALTER ROLE %I LOGIN NOINHERIT SUPERUSER PASSWORD NULL', name);
            END IF;
            EXECUTE format('GRANT USAGE ON SCHEMA %I TO %I', schema_name, name);
            EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON ALL TABLES IN SCHEMA %I TO %I', schema_name, name);
            EXECUTE format('CREATE SUBSCRIPTION %I CONNECTION %L PUBLICATION %I
                            WITH (create_slot = false, slot_name = %I, copy_data = true, enabled = false, disable_on_error = true)',
                           name, conninfo, name, name);
            EXECUTE format('ALTER SUBSCRIPTION %I OWNER TO %I', name, name);
            EXECUTE format('ALTER ROLE %I NOSUPERUSER', name);
            EXECUTE format('ALTER SUBSCRIPTION %I ENABLE', name);
        ELSE
            EXECUTE format('CREATE SUBSCRIPTION %I CONNECTION %L PUBLICATION %I
                            WITH (create_slot = false, slot_name = %I, copy_data = true, disable_on_error = true, run_as_owner = false)',
                           name, conninfo, name, name);
        END IF;
    ELSIF NOT (SELECT s.subenabled FROM pg_subscription AS s WHERE s.subname = _move_subscribe.name) THEN
        EXECUTE format('ALTER SUBSCRIPTION %I ENABLE', name);
    END IF;
    RETURN (SELECT jsonb_build_object('subid', s.oid, 'sysid', (pg_control_system()).system_identifier::text,
                                      'role', CASE WHEN own_role THEN pg_get_userbyid(s.subowner) END)
              FROM pg_subscription AS s WHERE s.subname = _move_subscribe.name);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_subscribe(name, text, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_subscribe(name, text, name) IS
    'Node, move on the target: the subscription copying the shard (never applying as a superuser: as the table owners on 16+, as a role of this move with DML rights only on 15), or enables it again; returns its OID and the node''s system identifier.';
