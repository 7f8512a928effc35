-- Node: check_cluster()'s fix of move_leftover: drops one thing an
-- interrupted move left here, by what it is and its name, which must be a
-- move's (shardid_move_<shard>_<move id>; 22023 otherwise): a
-- publication, a subscription (disabled and detached from its slot first,
-- _move_unsubscribe(), which drops 15's move role too), a replication slot
-- (55006 while a process uses it) or 15's move role. Touches no table; the
-- router knows which moves are in progress, so call it for what
-- check_cluster() reports. Returns whether it dropped something.
CREATE OR REPLACE FUNCTION shardid.drop_move_leftover(what text, name name) RETURNS boolean
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, pg_temp
    SET client_min_messages = warning
AS $$
BEGIN
    IF name IS NULL OR name::text !~ '^shardid_move_[0-9]+_[0-9]+$' THEN
        RAISE EXCEPTION 'shardid: % is not the name of a move''s object', pg_catalog.to_jsonb(name::text)::text
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'A move names what it makes shardid_move_<shard>_<move id>.';
    END IF;
    CASE what
        WHEN 'publication' THEN
            IF EXISTS (SELECT FROM pg_publication AS p WHERE p.pubname = drop_move_leftover.name) THEN
                EXECUTE pg_catalog.format('DROP PUBLICATION %I', name);
                RETURN true;
            END IF;
        WHEN 'subscription', 'role' THEN
            IF EXISTS (SELECT FROM pg_subscription AS s WHERE s.subname = drop_move_leftover.name)
               OR EXISTS (SELECT FROM pg_roles AS r WHERE r.rolname = drop_move_leftover.name) THEN
                PERFORM shardid_internal._move_unsubscribe(name);
                RETURN true;
            END IF;
        WHEN 'replication slot' THEN
            IF EXISTS (SELECT FROM pg_replication_slots AS s WHERE s.slot_name = drop_move_leftover.name
                                                              AND s.database = current_database()) THEN
                PERFORM pg_drop_replication_slot(name);
                RETURN true;
            END IF;
        ELSE
            RAISE EXCEPTION 'shardid: % is no kind of move leftover', pg_catalog.to_jsonb(what)::text
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'One of publication, subscription, replication slot, role.';
    END CASE;
    RETURN false;
END
$$;

REVOKE ALL ON FUNCTION shardid.drop_move_leftover(text, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid.drop_move_leftover(text, name) IS
    'Node: check_cluster()''s fix of move_leftover: drops a publication, subscription, replication slot or role an interrupted move left here, by its name (a move''s: shardid_move_<shard>_<move id>); returns whether it dropped something.';
