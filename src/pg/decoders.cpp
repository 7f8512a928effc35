/*
 * decoders.cpp — SQL functions that compose and decode IDs and short codes.
 *
 * All are pure functions of their arguments and the database's layout
 * (cached, see layout_cache.cpp). Each is STRICT in SQL: NULL in, NULL out.
 */
#include "shardid_pg.h"
#include "errors.h"
#include "layout_cache.h"

extern "C" {
#include "access/htup_details.h"
#include "funcapi.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(shardid_id_time);
PG_FUNCTION_INFO_V1(shardid_id_shard);
PG_FUNCTION_INFO_V1(shardid_id_seq);
PG_FUNCTION_INFO_V1(shardid_id_decode);
PG_FUNCTION_INFO_V1(shardid_make_id);
PG_FUNCTION_INFO_V1(shardid_time_to_id);
PG_FUNCTION_INFO_V1(shardid_to_shortcode);
PG_FUNCTION_INFO_V1(shardid_from_shortcode);
PG_FUNCTION_INFO_V1(shardid_state_decode);
}

/* The fields of an ID, or the SQL error for a negative one. */
static shardid::Parts
decode_or_error(int64 id)
{
	const shardid::Layout &layout = current_layout();
	shardid::Parts parts;
	shardid::Status st = shardid::decode(layout, id, &parts);

	if (st != shardid::Status::ok)
		report_layout_status(st, layout, id);
	return parts;
}

/* id_time(bigint) — when the ID was made. */
extern "C" Datum
shardid_id_time(PG_FUNCTION_ARGS)
{
	PG_RETURN_TIMESTAMPTZ(unix_ms_to_timestamptz(decode_or_error(PG_GETARG_INT64(0)).unix_ms));
}

/* id_shard(bigint) — the logical shard, for routing. */
extern "C" Datum
shardid_id_shard(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(decode_or_error(PG_GETARG_INT64(0)).shard);
}

/* id_seq(bigint) — the sequence field. */
extern "C" Datum
shardid_id_seq(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(decode_or_error(PG_GETARG_INT64(0)).seq);
}

/* id_decode(bigint) — all three fields as (ts, shard, seq). */
extern "C" Datum
shardid_id_decode(PG_FUNCTION_ARGS)
{
	TupleDesc tupdesc;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);

	shardid::Parts parts = decode_or_error(PG_GETARG_INT64(0));
	Datum values[3] = {
		TimestampTzGetDatum(unix_ms_to_timestamptz(parts.unix_ms)),
		Int32GetDatum(parts.shard),
		Int32GetDatum(parts.seq),
	};
	bool nulls[3] = {false, false, false};

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* make_id(ts, shard, seq) — Instagram's formula, with range checks. */
extern "C" Datum
shardid_make_id(PG_FUNCTION_ARGS)
{
	const shardid::Layout &layout = current_layout();
	int64 unix_ms = timestamptz_to_unix_ms(PG_GETARG_TIMESTAMPTZ(0));
	int32 shard = PG_GETARG_INT32(1);
	int32 seq = PG_GETARG_INT32(2);
	int64 id = 0;
	shardid::Status st = shardid::compose(layout, unix_ms, shard, seq, &id);

	if (st != shardid::Status::ok)
		report_layout_status(st, layout,
							 st == shardid::Status::shard_out_of_range ? shard
							 : st == shardid::Status::seq_out_of_range ? seq
																	   : unix_ms);
	PG_RETURN_INT64(id);
}

/* time_to_id(ts) — the smallest ID of ts's millisecond, for range scans. */
extern "C" Datum
shardid_time_to_id(PG_FUNCTION_ARGS)
{
	const shardid::Layout &layout = current_layout();
	int64 unix_ms = timestamptz_to_unix_ms(PG_GETARG_TIMESTAMPTZ(0));
	int64 id = 0;
	shardid::Status st = shardid::time_to_id(layout, unix_ms, &id);

	if (st != shardid::Status::ok)
		report_layout_status(st, layout, unix_ms);
	PG_RETURN_INT64(id);
}

/* to_shortcode(bigint) — the URL-safe code of an ID. */
extern "C" Datum
shardid_to_shortcode(PG_FUNCTION_ARGS)
{
	int64 id = PG_GETARG_INT64(0);
	char buf[shardid::kMaxShortcodeLen];
	size_t len = 0;

	if (shardid::to_shortcode(id, buf, &len) != shardid::ShortcodeStatus::ok)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("ID %lld is negative", (long long) id),
						errdetail("Short codes encode IDs from 0 to 9223372036854775807.")));
	PG_RETURN_TEXT_P(cstring_to_text_with_len(buf, (int) len));
}

/* from_shortcode(text) — the ID of a code, refusing anything non-canonical. */
extern "C" Datum
shardid_from_shortcode(PG_FUNCTION_ARGS)
{
	text *code = PG_GETARG_TEXT_PP(0);
	const char *s = VARDATA_ANY(code);
	size_t len = VARSIZE_ANY_EXHDR(code);
	int64 id = 0;
	size_t bad = 0;

	switch (shardid::from_shortcode(s, len, &id, &bad))
	{
		case shardid::ShortcodeStatus::ok:
			break;
		case shardid::ShortcodeStatus::empty:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION), errmsg("short code is empty")));
			break;
		case shardid::ShortcodeStatus::bad_char:
			ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
							errmsg("invalid character in short code \"%s\" at position %zu",
								   text_to_cstring(code), bad + 1),
							errdetail("Short codes use only A-Z, a-z, 0-9, \"-\" and \"_\".")));
			break;
		case shardid::ShortcodeStatus::leading_zero:
			ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
							errmsg("short code \"%s\" has a leading zero digit \"A\"",
								   text_to_cstring(code)),
							errdetail("Each ID has one code; only the ID 0 is written \"A\".")));
			break;
		case shardid::ShortcodeStatus::too_large:
		case shardid::ShortcodeStatus::negative:
			ereport(
				ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("short code \"%s\" is out of range for a 63-bit ID", text_to_cstring(code)),
				 errdetail("The largest code is \"H__________\" (9223372036854775807).")));
			break;
	}
	PG_RETURN_INT64(id);
}

/*
 * _state_decode(state) — the time and counter of a generator state
 * (time << seq_bits | counter), for views that report generators; NULL for
 * a state outside the layout, which a view must show rather than fail on.
 */
extern "C" Datum
shardid_state_decode(PG_FUNCTION_ARGS)
{
	TupleDesc tupdesc;
	int64 unix_ms;
	int64 counter;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);

	if (!shardid::decode_state(current_layout(), PG_GETARG_INT64(0), &unix_ms, &counter))
		PG_RETURN_NULL();

	Datum values[2] = {
		TimestampTzGetDatum(unix_ms_to_timestamptz(unix_ms)),
		Int32GetDatum((int32) counter),
	};
	bool nulls[2] = {false, false};

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
