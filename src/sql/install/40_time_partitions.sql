-- shardid install script, part 40: time partitions of tables keyed by ID.
--
-- IDs sort by time, so PARTITION BY RANGE (id) with time_to_id() bounds is
-- partitioning by time, and WHERE id >= time_to_id(a) AND id < time_to_id(b)
-- prunes to the partitions of [a, b).
\ir ../functions/create_time_partitions.sql
