-- The batches of create_shards(_proc)() and create_table(_proc)(), when
-- the server's lock table ran out (53200 with max_locks_per_transaction in
-- its hint) after made items (item: shard or table), every one created in
-- this transaction holding its locks until it ends (holds: which): raises
-- 53200 saying so. With batch_size NULL (the one-transaction function,
-- what: its call), nothing was created and the HINT names the procedure
-- (proc: its call without the closing parenthesis) that commits in
-- batches; otherwise the earlier batches are committed, and the HINT goes
-- on with batches a quarter of the size (batch: how a batch's items are
-- named).
CREATE OR REPLACE FUNCTION shardid_internal._raise_out_of_locks(what text, item text, batch text, holds text, proc text,
                                                                made integer, batch_size integer) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF batch_size IS NULL THEN
        RAISE EXCEPTION '% needs more locks than one transaction can hold', what
            USING ERRCODE = 'out_of_memory',
                  DETAIL = format('The server''s lock table ran out after %s %ss (max_locks_per_transaction = %s): %s until the transaction ends. No %s was created.',
                                  made, item, current_setting('max_locks_per_transaction'), holds, item),
                  HINT = format('CALL %s); creates the %ss in batches that commit.', proc, item);
    END IF;
    RAISE EXCEPTION 'a batch of % % needs more locks than the server''s lock table has free', batch_size, batch
        USING ERRCODE = 'out_of_memory',
              DETAIL = format('It ran out after %s %ss (max_locks_per_transaction = %s); they were rolled back. The %ss of earlier batches are committed.',
                              made, item, current_setting('max_locks_per_transaction'), item),
              HINT = format('Go on with smaller batches: CALL %s, %s);', proc, GREATEST(1, batch_size / 4));
END
$$;

COMMENT ON FUNCTION shardid_internal._raise_out_of_locks(text, text, text, text, text, integer, integer) IS
    'create_shards(_proc)() and create_table(_proc)(): raises 53200 when the lock table ran out after made items, with the procedure that commits in batches (or smaller batches) in the HINT. Executable by PUBLIC (the batches of shard administrators call it; it only raises).';
