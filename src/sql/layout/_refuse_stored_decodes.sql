-- Called by configure() with the layout it is about to write (a new layout
-- would make every stored decode stale; the same one changes nothing), and
-- by the trigger below without one (any change).
CREATE OR REPLACE FUNCTION shardid_internal._refuse_stored_decodes(new_epoch_ms bigint DEFAULT NULL,
                                               new_shard_bits integer DEFAULT NULL,
                                               new_seq_bits integer DEFAULT NULL)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n bigint;
    first_object text;
BEGIN
    IF (new_epoch_ms, new_shard_bits, new_seq_bits) =
       (SELECT (extract(epoch FROM l.epoch) * 1000)::bigint, l.shard_bits, l.seq_bits
          FROM shardid.layout() AS l) THEN
        RETURN;
    END IF;
    SELECT count(*), min(s.object) INTO n, first_object FROM shardid.stored_decodes AS s;
    IF n > 0 THEN
        RAISE EXCEPTION 'the layout cannot change: % object(s) store values of shardid decoders, such as %',
                        n, first_object
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Their stored values were computed with the current layout and would go stale.',
                  HINT = 'SELECT * FROM shardid.stored_decodes lists them; drop them, configure the layout, then create them again.';
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._refuse_stored_decodes(bigint, integer, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._refuse_stored_decodes(bigint, integer, integer) IS
    'Raises 55000 if anything stores values of shardid decoders and the layout would change; called by configure().';
