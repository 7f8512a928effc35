// shortcode.cpp — base-64 short codes with Instagram's alphabet.
#include "shortcode.hpp"

#include <limits>

namespace shardid {

static constexpr char kAlphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

// Value of one code character, or -1 when it is not in the alphabet.
static int
digit_value(unsigned char c) noexcept
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '-')
		return 62;
	if (c == '_')
		return 63;
	return -1;
}

ShortcodeStatus
to_shortcode(std::int64_t id, char *out, std::size_t *len) noexcept
{
	if (id < 0)
		return ShortcodeStatus::negative;
	char reversed[kMaxShortcodeLen];
	std::size_t n = 0;
	auto v = static_cast<std::uint64_t>(id);
	do {
		reversed[n++] = kAlphabet[v & 63];
		v >>= 6;
	} while (v != 0);
	for (std::size_t i = 0; i < n; i++)
		out[i] = reversed[n - 1 - i];
	*len = n;
	return ShortcodeStatus::ok;
}

ShortcodeStatus
from_shortcode(const char *code, std::size_t len, std::int64_t *id, std::size_t *bad_pos) noexcept
{
	if (len == 0)
		return ShortcodeStatus::empty;
	for (std::size_t i = 0; i < len; i++) {
		if (digit_value(static_cast<unsigned char>(code[i])) < 0) {
			*bad_pos = i;
			return ShortcodeStatus::bad_char;
		}
	}
	if (len > 1 && code[0] == kAlphabet[0])
		return ShortcodeStatus::leading_zero;
	constexpr std::uint64_t kMax = std::numeric_limits<std::int64_t>::max();
	std::uint64_t v = 0;
	for (std::size_t i = 0; i < len; i++) {
		if (v > (kMax >> 6))
			return ShortcodeStatus::too_large;
		v = (v << 6) | static_cast<std::uint64_t>(digit_value(static_cast<unsigned char>(code[i])));
	}
	*id = static_cast<std::int64_t>(v);
	return ShortcodeStatus::ok;
}

}  // namespace shardid
