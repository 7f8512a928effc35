// shortcode.hpp — URL-safe short codes: an ID written in base 64 over
// Instagram's alphabet A-Z a-z 0-9 - _, most significant digit first.
#pragma once

#include <cstddef>
#include <cstdint>

namespace shardid {

// A 63-bit value needs at most 11 base-64 digits.
constexpr std::size_t kMaxShortcodeLen = 11;

enum class ShortcodeStatus : std::uint8_t {
	ok,
	negative,      // to_shortcode of a negative value
	empty,         // from_shortcode of ""
	bad_char,      // a character outside the alphabet
	leading_zero,  // a leading 'A' (the zero digit) on a longer code
	too_large,     // more than 63 bits
};

// Writes the code of id (>= 0) into out (kMaxShortcodeLen bytes, no NUL)
// and its length into *len.
ShortcodeStatus to_shortcode(std::int64_t id, char *out, std::size_t *len) noexcept;

// Parses a code; on bad_char *bad_pos is the offending byte's index.
ShortcodeStatus from_shortcode(const char *code, std::size_t len, std::int64_t *id,
							   std::size_t *bad_pos) noexcept;

}  // namespace shardid
