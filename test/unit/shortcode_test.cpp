// shortcode_test.cpp — unit tests of src/core/shortcode: the base-64 codes
// over Instagram's alphabet, their edges and every refusal.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>

#include "shortcode.hpp"

namespace {

using shardid::ShortcodeStatus;

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

std::string
code_of(std::int64_t id)
{
	char buf[shardid::kMaxShortcodeLen];
	std::size_t len = 99;
	EXPECT_EQ(shardid::to_shortcode(id, buf, &len), ShortcodeStatus::ok);
	EXPECT_GE(len, 1u);
	EXPECT_LE(len, shardid::kMaxShortcodeLen);
	return std::string(buf, len);
}

ShortcodeStatus
parse(const std::string &code, std::int64_t *id, std::size_t *bad_pos = nullptr)
{
	std::size_t pos = 999;
	ShortcodeStatus st = shardid::from_shortcode(code.data(), code.size(), id, &pos);
	if (bad_pos)
		*bad_pos = pos;
	return st;
}

TEST(Shortcode, KnownValues)
{
	EXPECT_EQ(code_of(0), "A");
	EXPECT_EQ(code_of(1), "B");
	EXPECT_EQ(code_of(25), "Z");
	EXPECT_EQ(code_of(26), "a");
	EXPECT_EQ(code_of(51), "z");
	EXPECT_EQ(code_of(52), "0");
	EXPECT_EQ(code_of(61), "9");
	EXPECT_EQ(code_of(62), "-");
	EXPECT_EQ(code_of(63), "_");
	EXPECT_EQ(code_of(64), "BA");
	EXPECT_EQ(code_of(4095), "__");
	EXPECT_EQ(code_of(4096), "BAA");
	EXPECT_EQ(code_of(kInt64Max), "H__________");
	// a real Instagram media ID and its public code
	EXPECT_EQ(code_of(908540701891980503), "ybyPRoQWzX");
}

TEST(Shortcode, ParsesKnownCodes)
{
	std::int64_t id = -1;
	ASSERT_EQ(parse("A", &id), ShortcodeStatus::ok);
	EXPECT_EQ(id, 0);
	ASSERT_EQ(parse("_", &id), ShortcodeStatus::ok);
	EXPECT_EQ(id, 63);
	ASSERT_EQ(parse("BA", &id), ShortcodeStatus::ok);
	EXPECT_EQ(id, 64);
	ASSERT_EQ(parse("H__________", &id), ShortcodeStatus::ok);
	EXPECT_EQ(id, kInt64Max);
	ASSERT_EQ(parse("ybyPRoQWzX", &id), ShortcodeStatus::ok);
	EXPECT_EQ(id, 908540701891980503);
	// only the given length is read
	ASSERT_EQ(shardid::from_shortcode("BA!!", 2, &id, nullptr), ShortcodeStatus::ok);
	EXPECT_EQ(id, 64);
}

TEST(Shortcode, RefusesNegative)
{
	char buf[shardid::kMaxShortcodeLen];
	std::size_t len = 99;
	EXPECT_EQ(shardid::to_shortcode(-1, buf, &len), ShortcodeStatus::negative);
	EXPECT_EQ(shardid::to_shortcode(std::numeric_limits<std::int64_t>::min(), buf, &len),
			  ShortcodeStatus::negative);
	EXPECT_EQ(len, 99u);
}

TEST(Shortcode, RefusesEmpty)
{
	std::int64_t id = 42;
	EXPECT_EQ(parse("", &id), ShortcodeStatus::empty);
	EXPECT_EQ(id, 42);
}

TEST(Shortcode, RefusesBadCharacters)
{
	std::int64_t id = 42;
	std::size_t pos = 0;
	EXPECT_EQ(parse("+", &id, &pos), ShortcodeStatus::bad_char);
	EXPECT_EQ(pos, 0u);
	EXPECT_EQ(parse("AB/", &id, &pos), ShortcodeStatus::bad_char);
	EXPECT_EQ(pos, 2u);
	EXPECT_EQ(parse("ab=", &id, &pos), ShortcodeStatus::bad_char);
	EXPECT_EQ(pos, 2u);
	EXPECT_EQ(parse("a b", &id, &pos), ShortcodeStatus::bad_char);
	EXPECT_EQ(pos, 1u);
	EXPECT_EQ(parse("B.", &id, &pos), ShortcodeStatus::bad_char);
	EXPECT_EQ(pos, 1u);
	EXPECT_EQ(parse(std::string("B\0C", 3), &id, &pos), ShortcodeStatus::bad_char);
	EXPECT_EQ(pos, 1u);
	// a multibyte character: the position is its first byte
	EXPECT_EQ(parse("Bé", &id, &pos), ShortcodeStatus::bad_char);
	EXPECT_EQ(pos, 1u);
	// bytes next to the alphabet's ranges
	for (char c : std::string("@[`{/:,\x7f"))
		EXPECT_EQ(parse(std::string("B") + c, &id), ShortcodeStatus::bad_char) << c;
	// a bad character is reported before a leading zero or an overflow
	EXPECT_EQ(parse("AA*", &id, &pos), ShortcodeStatus::bad_char);
	EXPECT_EQ(pos, 2u);
	EXPECT_EQ(parse("____________*", &id, &pos), ShortcodeStatus::bad_char);
	EXPECT_EQ(pos, 12u);
	EXPECT_EQ(id, 42);
}

TEST(Shortcode, RefusesLeadingZeroDigit)
{
	std::int64_t id = 42;
	EXPECT_EQ(parse("AA", &id), ShortcodeStatus::leading_zero);
	EXPECT_EQ(parse("AB", &id), ShortcodeStatus::leading_zero);
	EXPECT_EQ(parse("AH__________", &id), ShortcodeStatus::leading_zero);
	EXPECT_EQ(parse(std::string(40, 'A'), &id), ShortcodeStatus::leading_zero);
	EXPECT_EQ(id, 42);
	// 'A' elsewhere is an ordinary zero digit
	ASSERT_EQ(parse("BAA", &id), ShortcodeStatus::ok);
	EXPECT_EQ(id, 4096);
}

TEST(Shortcode, RefusesMoreThan63Bits)
{
	std::int64_t id = 42;
	EXPECT_EQ(parse("I__________", &id), ShortcodeStatus::too_large);   // 2^63 + ...
	EXPECT_EQ(parse("IAAAAAAAAAA", &id), ShortcodeStatus::too_large);   // exactly 2^63
	EXPECT_EQ(parse("___________", &id), ShortcodeStatus::too_large);   // 2^66 - 1
	EXPECT_EQ(parse("BAAAAAAAAAAA", &id), ShortcodeStatus::too_large);  // 2^66, 12 digits
	EXPECT_EQ(parse(std::string(30, '_'), &id), ShortcodeStatus::too_large);
	EXPECT_EQ(id, 42);
	ASSERT_EQ(parse("HAAAAAAAAAA", &id), ShortcodeStatus::ok);
	EXPECT_EQ(id, std::int64_t{7} << 60);
}

TEST(Shortcode, RoundTripPowersOfTwoAndNeighbours)
{
	for (int bit = 0; bit < 63; bit++) {
		const std::int64_t p = std::int64_t{1} << bit;
		for (std::int64_t v : {p - 1, p, p + 1}) {
			const std::string code = code_of(v);
			EXPECT_EQ(code.size(),
					  static_cast<std::size_t>(v == 0 ? 1 : (64 - __builtin_clzll(v) + 5) / 6))
				<< v;
			EXPECT_NE(code[0] == 'A', v != 0) << code;
			std::int64_t back = -1;
			ASSERT_EQ(parse(code, &back), ShortcodeStatus::ok) << code;
			EXPECT_EQ(back, v);
		}
	}
}

TEST(Shortcode, RoundTripRandom)
{
	std::mt19937_64 rng(63);
	for (int i = 0; i < 50000; i++) {
		// random widths, so short codes are as common as long ones
		const std::int64_t v = static_cast<std::int64_t>((rng() >> 1) >> (rng() % 63));
		const std::string code = code_of(v);
		std::int64_t back = -1;
		ASSERT_EQ(parse(code, &back), ShortcodeStatus::ok) << code;
		ASSERT_EQ(back, v) << code;
	}
}

}  // namespace
