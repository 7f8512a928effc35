# sql/include.awk — assembles an extension script from its parts, expanding
# "\ir FILE" lines as psql would (FILE relative to the including file).
#
#   awk -f sql/include.awk PART...                    every line, \ir expanded
#   awk -v objects=1 -f sql/include.awk PART...       only the \ir lines of
#       functions/ and views/ (what an upgrade script re-creates), expanded
function expand(file, line, dir) {
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
{
	dir = FILENAME
	sub(/[^\/]*$/, "", dir)
	if ($0 ~ /^\\ir /) {
		if (!objects || $2 ~ /^\.\.\/(functions|views)\//)
			expand(dir $2)
	} else if (!objects)
		print
}
