// ddl_template.hpp — apply_ddl()'s command template: where %s stands for
// the table's name. A command is SQL text in which %s (optionally followed
// by an identifier suffix, %s_user_id_idx) stands for each table's
// qualified name, and %% for %. The scanner reads the text as
// PostgreSQL's lexer does (string literals, E'' escapes, dollar quotes,
// quoted identifiers, comments) so that a %s is a placeholder only
// outside them: inside a literal or a quoted identifier it is refused,
// never replaced.
#pragma once

#include <cstddef>
#include <cstdint>

namespace shardid {

enum class DdlTemplateStatus : std::uint8_t {
	ok,
	no_placeholder,             // no %s outside literals
	placeholder_in_string,      // %s inside a string literal or dollar quote
	placeholder_in_identifier,  // %s inside a quoted identifier
	unterminated,               // a quote, dollar quote or comment never closed
};

enum class DdlPieceKind : std::uint8_t {
	text,   // command[start, start + len) as it is
	table,  // the table's qualified name; command[start, start + len) is its suffix
};

struct DdlPiece {
	DdlPieceKind kind;
	std::size_t start;
	std::size_t len;
};

// Splits command (len bytes) into pieces, in order; pieces must have room
// for len + 1 of them. On an error *error_pos is the offending byte.
DdlTemplateStatus scan_ddl_template(const char *command, std::size_t len, DdlPiece *pieces,
									std::size_t *n_pieces, std::size_t *error_pos) noexcept;

}  // namespace shardid
