/*
 * A check that a gnuplot script holds no code but pebblesim's own.
 *
 * gnuplot runs as code whatever stands outside a string: a command after
 * `;`, a shell line after `!`, `system(...)`, a macro `@name`, a
 * back-quoted command (substituted even inside double quotes), and any
 * command word. pebblesim writes its scripts from fixed text, numbers and
 * single-quoted strings, in which gnuplot substitutes nothing. So a
 * script is safe when, with its single-quoted strings set aside, every
 * word is one of the words pebblesim's writers use, and no character can
 * start a command, a shell line, a macro or a substitution.
 *
 * One line may name a file: `set output 'NAME'`, NAME of A-Z a-z 0-9
 * _ . + -, as the script that --plot-script writes for its user has it.
 *
 * The list of words is the writers' vocabulary: a writer that starts to
 * use a new one fails this check until the word is added here, which is
 * the review this check asks for.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "gnuplot_check.h"

static const char *const words[] = {
	/* commands and their options */
	"set", "unset", "plot", "replot", "terminal", "svg", "dynamic", "png",
	"pngcairo", "pdfcairo", "cairo", "size", "pointscale", "linewidth", "enhanced", "noenhanced",
	"truecolor", "font", "fontscale", "background", "rgb", "rgbcolor",
	"logscale", "xy", "x", "y", "x2", "y2", "xlabel", "ylabel", "x2label",
	"y2label", "title", "notitle", "key", "outside", "inside", "right",
	"left", "top", "bottom", "center", "below", "above", "box", "nobox", "opaque", "spacing",
	"samplen", "width", "height", "maxrows", "maxcols", "horizontal",
	"vertical", "Left", "Right", "reverse", "noreverse", "invert",
	"grid", "xtics", "ytics", "x2tics", "y2tics", "mxtics", "mytics",
	"nomirror", "mirror", "format", "xrange", "yrange", "x2range", "y2range",
	"cbrange", "cbtics", "cblabel", "colorbox", "nocolorbox", "palette",
	"defined", "model", "RGB", "maxcolors", "arrow", "from", "to", "nohead",
	"head", "heads", "filled", "label", "at", "offset", "graph", "screen",
	"first", "second", "character", "front", "back", "point", "style",
	"line", "lines", "linespoints", "points", "boxes", "fill", "solid",
	"transparent", "pattern", "border", "noborder", "dt", "dashtype", "lc",
	"linecolor", "lt", "linetype", "lw", "linewidth", "pt", "pointtype",
	"ps", "pointsize", "pi", "pointinterval", "with", "using", "index",
	"every", "axes", "x1y1", "x1y2", "x2y1", "x2y2", "autoscale",
	"noautoscale", "fix", "margin", "lmargin", "rmargin", "tmargin",
	"bmargin", "tics", "out", "in", "scale", "rotate", "by", "norotate",
	"textcolor", "tc", "variable", "image", "rgbimage", "matrix",
	"nonuniform", "pm3d", "map", "labels", "view", "equal", "xyplane", "ratio",
	"boxwidth", "absolute", "relative", "noextend", "extend", "object",
	"rectangle", "rect", "behind", "fc", "fillcolor", "fs", "fillstyle",
	"noborder", "multiplot", "layout", "columns", "rows", "clip", "noclip",
	"datafile", "missing", "separator", "whitespace", "tab", "comma",
	"NaN", "nan", "e", "E", "bold", "italic", "encoding", "utf8",
	"default", "noinvert", "autotitle", "columnheader", "column",
	"lines", "steps", "fsteps", "histeps", "impulses", "vectors", "xerrorbars",
	"yerrorbars", "errorbars", "circles", "ellipses", "boxxyerror",
	"xtic", "ytic", "tic", "add", "keyentry", "black", "white", "gray",
	"grey", "red", "blue", "green", "dark", "light", "orange", "magenta",
	"cyan", "brown", "purple", "violet", "yellow", "navy", "olive", "teal",
	NULL,
};

/*
 * Words that gnuplot runs as commands or that read or write files:
 * never allowed outside a string, even if the list above held them.
 */
static const char *const banned[] = {
	"system", "load", "call", "eval", "print", "printerr", "shell", "exit",
	"quit", "cd", "pwd", "save", "import", "fit", "pause", "reread",
	"evaluate", "do", "for", "while", "if", "else", "test", "history",
	"toggle", "bind", "stats", "table", "undefine", "clear", "reset",
	"refresh", "raise", "lower", "help", "update", "splot", "function",
	"functions", "array", "sum", "exists", "value", "word", "words",
	"strlen", "substr", "strstrt", "gprintf", "sprintf", "fileexists",
	"output", "print", NULL,
};

static bool in_list(const char *const *list, const char *w, size_t len)
{
	for (size_t k = 0; list[k]; k++)
		if (strlen(list[k]) == len && !memcmp(list[k], w, len))
			return true;
	return false;
}

static int fail(char *why, size_t why_len, size_t line, const char *fmt, const char *w,
		size_t len)
{
	char word[64];

	snprintf(word, sizeof(word), "%.*s", (int)(len < 40 ? len : 40), w);
	if (why && why_len) {
		int k = snprintf(why, why_len, "line %zu: ", line);

		if (k >= 0 && (size_t)k < why_len)
			snprintf(why + k, why_len - (size_t)k, fmt, word);
	}
	return -1;
}

static const char set_output[] = "set output '";

int gnuplot_check(const char *s, size_t n, char *why, size_t why_len)
{
	size_t line = 1;
	bool line_start = true;

	for (size_t k = 0; k < n;) {
		unsigned char c = (unsigned char)s[k];

		if (c == '\n') {
			line++;
			line_start = true;
			k++;
			continue;
		}
		if (c == ' ' || c == '\t') {
			k++;
			continue;
		}
		if (line_start && c == '!')
			return fail(why, why_len, line, "a shell line%s", "", 0);
		if (line_start && n - k > sizeof(set_output) &&
		    !memcmp(s + k, set_output, sizeof(set_output) - 1)) {
			/* the one file a script names: a plain name, alone on its line */
			size_t e = k + sizeof(set_output) - 1;

			while (e < n && (isalnum((unsigned char)s[e]) || strchr("_.+-", s[e])))
				e++;
			if (e == k + sizeof(set_output) - 1 || e + 1 >= n || s[e] != '\'' ||
			    s[e + 1] != '\n')
				return fail(why, why_len, line, "an output that is not a plain name%s",
					    "", 0);
			k = e + 1;
			continue;
		}
		line_start = false;
		if (c == '\'') {
			/* a single-quoted string: '' is a quote, and it ends on its
			 * line; as a file name, '<' or '|' first would run a command */
			if (k + 1 < n && (s[k + 1] == '<' || s[k + 1] == '|'))
				return fail(why, why_len, line, "a string that would name a pipe%s",
					    "", 0);
			for (k++;; k++) {
				if (k >= n || s[k] == '\n')
					return fail(why, why_len, line, "a string left open%s", "", 0);
				if (s[k] == '\'' && k + 1 < n && s[k + 1] == '\'') {
					k++;
					continue;
				}
				if (s[k] == '\'')
					break;
				if ((unsigned char)s[k] < ' ' || (unsigned char)s[k] > '~')
					return fail(why, why_len, line,
						    "a byte outside printable ASCII in a string%s", "", 0);
			}
			k++;
			continue;
		}
		if (isalpha(c) || c == '_') {
			size_t start = k;

			while (k < n && (isalnum((unsigned char)s[k]) || s[k] == '_'))
				k++;
			if (in_list(banned, s + start, k - start) ||
			    !in_list(words, s + start, k - start))
				return fail(why, why_len, line, "the word '%s' is not pebblesim's",
					    s + start, k - start);
			continue;
		}
		if (isdigit(c) || strchr(".,:+-*/()[]{}<>=", c)) {
			k++;
			continue;
		}
		if (c == '\\' && k + 1 < n && s[k + 1] == '\n') {
			/* a line continued */
			k += 2;
			line++;
			continue;
		}
		if (c == '#') {
			/* a comment to the end of the line: gnuplot ignores it, and so
			 * would code hidden there, but pebblesim writes none */
			return fail(why, why_len, line, "a comment%s", "", 0);
		}
		{
			char ch[2] = { (char)c, 0 };

			return fail(why, why_len, line, "the character '%s' outside a string", ch,
				    1);
		}
	}
	return 0;
}
