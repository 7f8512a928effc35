/*
 * workers.h — what shardid's background workers share (rebalance_worker.cpp,
 * launcher.cpp).
 */
#pragma once

/*
 * Runs one statement in its own transaction at top level, as a client's
 * simple query does, so that a CALL may COMMIT.
 */
void run_top_level(const char *sql);

/* Registers the launcher at server start (shared_preload_libraries). */
void shardid_register_launcher(void);

/* shardid.launcher_naptime, in seconds. */
extern int shardid_launcher_naptime_s;

/* shardid.retired_copy_retention, in seconds; -1: the launcher drops none. */
extern int shardid_retired_copy_retention_s;
