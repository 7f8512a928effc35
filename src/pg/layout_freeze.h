/*
 * layout_freeze.h — the layout next_id() generates with, fixed once a
 * generator has issued an ID (layout_freeze.cpp).
 */
#pragma once

#include "shardid_pg.h"

/*
 * The layout next_id() generates with, copied to *layout; refuses a layout
 * this transaction changed. Returns whether this backend has marked the
 * layout in use; until it has, next_id() must call mark_layout_in_use()
 * before issuing and start over.
 */
bool generator_layout(shardid::Layout *layout);

/* Marks the layout in use (no more configure()) and rereads it. */
void mark_layout_in_use(void);
