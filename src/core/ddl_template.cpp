// ddl_template.cpp — the scanner of apply_ddl()'s command template
// (ddl_template.hpp): PostgreSQL's lexical rules for what is not code
// (quotes, dollar quotes, comments), and %s / %% outside and inside them.
#include "ddl_template.hpp"

namespace shardid {

namespace {

// A byte that may continue an identifier (PostgreSQL: letters, digits, _,
// $, and every byte of a multibyte character).
bool
ident_char(unsigned char c) noexcept
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
		   c == '$' || c >= 0x80;
}

// A byte that may start a dollar quote's tag (no digit, no $).
bool
tag_start(unsigned char c) noexcept
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

// Collects the pieces, merging nothing: a piece per run of text.
struct Out {
	DdlPiece *pieces;
	std::size_t n;

	void text(std::size_t start, std::size_t end) noexcept
	{
		if (end > start)
			pieces[n++] = DdlPiece{DdlPieceKind::text, start, end - start};
	}
	void table(std::size_t start, std::size_t len) noexcept
	{
		pieces[n++] = DdlPiece{DdlPieceKind::table, start, len};
	}
};

// Scans quoted text from `from` until `close` (a single quote or double
// quote) or the tag of a dollar quote; `%%` inside becomes `%` (the text
// before it is emitted), `%s` is refused. Returns the index just past the
// closing quote, or len when it is missing.
std::size_t
scan_quoted(const char *cmd, std::size_t len, std::size_t from, const char *close,
			std::size_t close_len, bool doubled, bool backslash, Out *out, std::size_t *text_start,
			DdlTemplateStatus in_status, DdlTemplateStatus *status, std::size_t *error_pos) noexcept
{
	std::size_t j = from;

	while (j < len) {
		if (backslash && cmd[j] == '\\' && j + 1 < len) {
			j += 2;
			continue;
		}
		bool closes = j + close_len <= len;
		for (std::size_t k = 0; closes && k < close_len; k++)
			closes = cmd[j + k] == close[k];
		if (closes) {
			if (doubled && j + 1 < len && cmd[j + 1] == close[0]) {
				j += 2;
				continue;
			}
			return j + close_len;
		}
		if (cmd[j] == '%' && j + 1 < len && cmd[j + 1] == 's') {
			*status = in_status;
			*error_pos = j;
			return len;
		}
		if (cmd[j] == '%' && j + 1 < len && cmd[j + 1] == '%') {
			out->text(*text_start, j + 1);
			*text_start = j + 2;
			j += 2;
			continue;
		}
		j++;
	}
	*status = DdlTemplateStatus::unterminated;
	return len;
}

}  // namespace

DdlTemplateStatus
scan_ddl_template(const char *cmd, std::size_t len, DdlPiece *pieces, std::size_t *n_pieces,
				  std::size_t *error_pos) noexcept
{
	Out out{pieces, 0};
	std::size_t text_start = 0;
	std::size_t i = 0;
	bool found = false;
	DdlTemplateStatus status = DdlTemplateStatus::ok;

	*error_pos = 0;
	while (i < len && status == DdlTemplateStatus::ok) {
		const unsigned char c = static_cast<unsigned char>(cmd[i]);
		const bool after_ident = i > 0 && ident_char(static_cast<unsigned char>(cmd[i - 1]));

		if (c == '\'') {
			// E'...' takes backslash escapes; the E must start a token
			const bool escapes = i > 0 && (cmd[i - 1] == 'E' || cmd[i - 1] == 'e') &&
								 (i < 2 || !ident_char(static_cast<unsigned char>(cmd[i - 2])));
			const std::size_t open = i;
			i = scan_quoted(cmd, len, i + 1, "'", 1, true, escapes, &out, &text_start,
							DdlTemplateStatus::placeholder_in_string, &status, error_pos);
			if (status == DdlTemplateStatus::unterminated)
				*error_pos = open;
		} else if (c == '"') {
			const std::size_t open = i;
			i = scan_quoted(cmd, len, i + 1, "\"", 1, true, false, &out, &text_start,
							DdlTemplateStatus::placeholder_in_identifier, &status, error_pos);
			if (status == DdlTemplateStatus::unterminated)
				*error_pos = open;
		} else if (c == '$' && !after_ident && i + 1 < len &&
				   (cmd[i + 1] == '$' || tag_start(static_cast<unsigned char>(cmd[i + 1])))) {
			std::size_t k = i + 1;
			while (k < len && cmd[k] != '$' && ident_char(static_cast<unsigned char>(cmd[k])))
				k++;
			if (k < len && cmd[k] == '$') {
				const std::size_t open = i;
				i = scan_quoted(cmd, len, k + 1, cmd + i, k + 1 - i, false, false, &out,
								&text_start, DdlTemplateStatus::placeholder_in_string, &status,
								error_pos);
				if (status == DdlTemplateStatus::unterminated)
					*error_pos = open;
			} else
				i = k;
		} else if (c == '-' && i + 1 < len && cmd[i + 1] == '-') {
			while (i < len && cmd[i] != '\n')
				i++;
		} else if (c == '/' && i + 1 < len && cmd[i + 1] == '*') {
			const std::size_t open = i;
			int depth = 1;

			i += 2;
			while (i < len && depth > 0) {
				if (cmd[i] == '/' && i + 1 < len && cmd[i + 1] == '*') {
					depth++;
					i += 2;
				} else if (cmd[i] == '*' && i + 1 < len && cmd[i + 1] == '/') {
					depth--;
					i += 2;
				} else
					i++;
			}
			if (depth > 0) {
				status = DdlTemplateStatus::unterminated;
				*error_pos = open;
			}
		} else if (c == '%' && i + 1 < len && cmd[i + 1] == '%') {
			out.text(text_start, i + 1);
			text_start = i + 2;
			i += 2;
		} else if (c == '%' && i + 1 < len && cmd[i + 1] == 's') {
			std::size_t k = i + 2;

			while (k < len && ident_char(static_cast<unsigned char>(cmd[k])))
				k++;
			out.text(text_start, i);
			out.table(i + 2, k - (i + 2));
			found = true;
			text_start = k;
			i = k;
		} else
			i++;
	}
	if (status != DdlTemplateStatus::ok) {
		*n_pieces = 0;
		return status;
	}
	out.text(text_start, len);
	*n_pieces = out.n;
	return found ? DdlTemplateStatus::ok : DdlTemplateStatus::no_placeholder;
}

}  // namespace shardid
