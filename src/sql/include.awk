# src/sql/include.awk — assembles an extension script from its parts,
# expanding "\ir FILE" lines as psql would (FILE relative to the including
# file). Each file is expanded once, however many parts name it.
#
#   awk -f src/sql/include.awk PART...              every line, \ir expanded
#   awk -v upgrade=1 -f src/sql/include.awk UPDATE PART...
#       an upgrade script: every line of UPDATE (what CREATE OR REPLACE
#       cannot do), then of the PARTs only the \ir lines of functions/,
#       procedures/ and views/ (what an upgrade re-creates), each object
#       once: one that UPDATE already includes is not repeated.

# the path without "dir/../" steps, so one file has one name
function normal(path) {
	while (sub(/[^\/.][^\/]*\/\.\.\//, "", path))
		;
	return path
}
function expand(file, line, dir) {
	file = normal(file)
	if (file in seen)
		return
	seen[file] = 1
	dir = file
	sub(/[^\/]*$/, "", dir)
	while ((getline line < file) > 0) {
		if (line ~ /^\\ir /)
			expand(dir substr(line, 5))
		else
			print line
	}
	close(file)
}
FNR == 1 { parts++ }
{
	dir = FILENAME
	sub(/[^\/]*$/, "", dir)
	objects = upgrade && parts > 1
	if ($0 ~ /^\\ir /) {
		if (!objects || $2 ~ /^\.\.\/(functions|procedures|views)\//)
			expand(dir $2)
	} else if (!objects)
		print
}
