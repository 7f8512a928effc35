# src/sql/include.awk — assembles an extension script from its sources,
# expanding "\ir FILE" lines as psql would (FILE relative to the including
# file). Each object file is expanded once, however many files name it.
#
#   awk -f src/sql/include.awk src/sql/shardid.sql
#       the install script: every line, \ir expanded
#   awk -v upgrade=1 -f src/sql/include.awk UPDATE src/sql/shardid.sql
#       an upgrade script: every line of UPDATE (what CREATE OR REPLACE
#       cannot do), then, of the files src/sql/shardid.sql names through
#       the areas' install.sql manifests, only the objects an upgrade
#       re-creates: files whose first CREATE is CREATE OR REPLACE
#       FUNCTION, PROCEDURE or VIEW; one UPDATE already includes is not
#       repeated.

# the path without "dir/../" steps, so one file has one name
function normal(path) {
	while (sub(/[^\/.][^\/]*\/\.\.\//, "", path))
		;
	return path
}
# a manifest names files (\ir) and holds no object: shardid.sql, install.sql
function manifest(file) {
	return file ~ /(^|\/)(shardid|install)\.sql$/
}
# whether an upgrade re-creates the object of file
function replaceable(file,   line, yes) {
	yes = 0
	while ((getline line < file) > 0)
		if (line ~ /^CREATE /) {
			yes = line ~ /^CREATE OR REPLACE (FUNCTION|PROCEDURE|VIEW) /
			break
		}
	close(file)
	return yes
}
# prints file with its \ir lines expanded; objects: only what an upgrade
# re-creates (a manifest's own lines are then left out too)
function expand(file, objects,   line, dir) {
	file = normal(file)
	if (!manifest(file)) {
		if (file in seen || (objects && !replaceable(file)))
			return
		seen[file] = 1
		objects = 0
	}
	dir = file
	sub(/[^\/]*$/, "", dir)
	while ((getline line < file) > 0) {
		if (line ~ /^\\ir /)
			expand(dir substr(line, 5), objects)
		else if (!objects)
			print line
	}
	close(file)
}
BEGIN {
	for (i = 1; i < ARGC; i++)
		expand(ARGV[i], upgrade && i > 1)
	exit
}
