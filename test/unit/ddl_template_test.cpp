// ddl_template_test.cpp — unit tests of src/core/ddl_template: where %s
// stands for the table (outside literals, quoted identifiers and
// comments), its suffix, %%, and every refusal with its position.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ddl_template.hpp"

namespace {

using shardid::DdlPiece;
using shardid::DdlPieceKind;
using shardid::DdlTemplateStatus;

struct Scan {
	DdlTemplateStatus status;
	std::string rendered;  // text as is, each table as <T:suffix>
	std::size_t error_pos;
};

Scan
scan(const std::string &cmd)
{
	std::vector<DdlPiece> pieces(cmd.size() + 1);
	std::size_t n = 999, pos = 999;
	Scan s{shardid::scan_ddl_template(cmd.data(), cmd.size(), pieces.data(), &n, &pos), "", pos};
	for (std::size_t i = 0; i < n; i++) {
		const std::string part = cmd.substr(pieces[i].start, pieces[i].len);
		s.rendered += pieces[i].kind == DdlPieceKind::table ? "<T:" + part + ">" : part;
	}
	return s;
}

TEST(DdlTemplate, TableAndSuffix)
{
	EXPECT_EQ(scan("ALTER TABLE %s ADD COLUMN mood text").rendered,
			  "ALTER TABLE <T:> ADD COLUMN mood text");
	EXPECT_EQ(scan("DROP INDEX %s_user_id_idx").rendered, "DROP INDEX <T:_user_id_idx>");
	EXPECT_EQ(scan("CREATE INDEX i ON %s (a)").rendered, "CREATE INDEX i ON <T:> (a)");
	EXPECT_EQ(scan("ALTER TABLE %s ADD CHECK (a %% 2 = 0)").rendered,
			  "ALTER TABLE <T:> ADD CHECK (a % 2 = 0)");
	EXPECT_EQ(scan("ALTER TABLE %s ADD CHECK (a % 2 = 0)").rendered,
			  "ALTER TABLE <T:> ADD CHECK (a % 2 = 0)");
	EXPECT_EQ(scan("%s").rendered, "<T:>");
	EXPECT_EQ(scan("ALTER INDEX %s_a RENAME TO b").status, DdlTemplateStatus::ok);
}

TEST(DdlTemplate, LiteralsKeepTheirText)
{
	// %% is % in a literal too; a lone % stays
	EXPECT_EQ(scan("ALTER TABLE %s ALTER COLUMN c SET DEFAULT '50%%'").rendered,
			  "ALTER TABLE <T:> ALTER COLUMN c SET DEFAULT '50%'");
	EXPECT_EQ(scan("ALTER TABLE %s ALTER COLUMN c SET DEFAULT '50%'").rendered,
			  "ALTER TABLE <T:> ALTER COLUMN c SET DEFAULT '50%'");
	EXPECT_EQ(scan("ALTER TABLE %s ALTER COLUMN c SET DEFAULT '%%s'").rendered,
			  "ALTER TABLE <T:> ALTER COLUMN c SET DEFAULT '%s'");
	// a doubled quote does not end the literal
	EXPECT_EQ(scan("ALTER TABLE %s ALTER c SET DEFAULT 'it''s'").rendered,
			  "ALTER TABLE <T:> ALTER c SET DEFAULT 'it''s'");
	// comments are text; a %s there is left alone
	EXPECT_EQ(scan("ALTER TABLE %s -- for %s\n ADD x int").rendered,
			  "ALTER TABLE <T:> -- for %s\n ADD x int");
	EXPECT_EQ(scan("ALTER TABLE /* %s /* nested */ */ %s ADD x int").rendered,
			  "ALTER TABLE /* %s /* nested */ */ <T:> ADD x int");
	// $1 is no dollar quote
	EXPECT_EQ(scan("ALTER TABLE %s ADD CHECK (a$1 > 0)").status, DdlTemplateStatus::ok);
}

TEST(DdlTemplate, PlaceholderInsideIsRefused)
{
	Scan s = scan("ALTER TABLE %s ADD COLUMN origin text DEFAULT '%s'");
	EXPECT_EQ(s.status, DdlTemplateStatus::placeholder_in_string);
	EXPECT_EQ(s.error_pos, 47u);
	EXPECT_EQ(scan("ALTER TABLE %s ADD COLUMN \"%s\" int").status,
			  DdlTemplateStatus::placeholder_in_identifier);
	EXPECT_EQ(scan("ALTER TABLE %s ALTER c SET DEFAULT $$%s$$").status,
			  DdlTemplateStatus::placeholder_in_string);
	EXPECT_EQ(scan("ALTER TABLE %s ALTER c SET DEFAULT $q$ $ %s $q$").status,
			  DdlTemplateStatus::placeholder_in_string);
	// E'' escapes: \' does not end the literal
	EXPECT_EQ(scan("ALTER TABLE %s ALTER c SET DEFAULT E'\\' %s'").status,
			  DdlTemplateStatus::placeholder_in_string);
	// without E, a backslash is a character and the quote ends the literal
	EXPECT_EQ(scan("ALTER TABLE %s ALTER c SET DEFAULT '\\' || %s").status, DdlTemplateStatus::ok);
}

TEST(DdlTemplate, Unterminated)
{
	Scan s = scan("ALTER TABLE %s ALTER c SET DEFAULT 'oops");
	EXPECT_EQ(s.status, DdlTemplateStatus::unterminated);
	EXPECT_EQ(s.error_pos, 35u);
	EXPECT_EQ(scan("ALTER TABLE %s ADD \"x int").status, DdlTemplateStatus::unterminated);
	EXPECT_EQ(scan("ALTER TABLE %s /* x").status, DdlTemplateStatus::unterminated);
	EXPECT_EQ(scan("ALTER TABLE %s ALTER c SET DEFAULT $a$ x").status,
			  DdlTemplateStatus::unterminated);
}

TEST(DdlTemplate, NoPlaceholder)
{
	EXPECT_EQ(scan("ALTER TABLE public.photos ADD COLUMN a int").status,
			  DdlTemplateStatus::no_placeholder);
	EXPECT_EQ(scan("ALTER TABLE x ADD c text DEFAULT '%s'").status,
			  DdlTemplateStatus::placeholder_in_string);
	EXPECT_EQ(scan("").status, DdlTemplateStatus::no_placeholder);
	EXPECT_EQ(scan("ALTER TABLE %I ADD a int").status, DdlTemplateStatus::no_placeholder);
}

}  // namespace
