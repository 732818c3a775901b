/*
 * test_logline.c - cutting long log messages (lib/logline.h): short ones pass whole, long ones
 * are cut after "; " first, then ", ", then at a blank, never wider than the width; every
 * further line carries the message's tag and the continuation blank, and joining the lines
 * with one blank gives the message back.
 */
#include <stdio.h>
#include <string.h>

#include "lib/logline.h"
#include "check.h"

struct lines {
	char text[16][256];
	unsigned n;
	size_t widest;
	char joined[2048];
};

static void collect(void *ctx, const char *tag, size_t tag_len, const char *text, size_t text_len)
{
	struct lines *l = ctx;
	char line[256];
	size_t len;

	logline_format(line, sizeof(line), tag, tag_len, text, text_len);
	len = strlen(line);
	if (l->n < 16)
		memcpy(l->text[l->n], line, len + 1);
	if (len > l->widest)
		l->widest = len;
	/* what a reader of the log does: drop the tag and its blank, join with one blank */
	if (tag)
		strcat(l->joined, " ");
	strncat(l->joined, text, text_len);
	l->n++;
}

static void split(struct lines *l, const char *msg, size_t width)
{
	memset(l, 0, sizeof(*l));
	logline_split(msg, width, collect, l);
}

static void test_short_message_whole(void)
{
	struct lines l;

	split(&l, "sar-nue: routed 5 switches", 80);
	CHECK(l.n == 1);
	CHECK(!strcmp(l.text[0], "sar-nue: routed 5 switches"));
	split(&l, "", 80);
	CHECK(l.n == 1 && !l.text[0][0]);
}

static void test_tags(void)
{
	CHECK(logline_tag("WRN sar-nue: nue_vls=4 needs SL2VL") == strlen("WRN sar-nue: "));
	CHECK(logline_tag("no tag here") == 0);
	/* a colon after the first clause is not a tag */
	CHECK(logline_tag("job map x; line 3: bad") == 0);
	CHECK(logline_tag("a very long first clause that goes on and on and on: x") == 0);
}

/* Cuts after "; " rather than ", "; the tag and its blank come back on the second line. */
static void test_cut_at_semicolon(void)
{
	char msg[400];
	struct lines l;
	const char *first = "WRN sar-dfsssp: DFSSSP's layering needs 13 layers, 8 VLs available";
	const char *second = "23 of 4096 destinations moved to Nue, which needs 2 of its own, more";

	snprintf(msg, sizeof(msg), "%s; %s", first, second);
	split(&l, msg, 100);
	CHECK(l.n == 2);
	CHECK(!strncmp(l.text[0], first, strlen(first)) && !strcmp(l.text[0] + strlen(first), ";"));
	CHECK(!strncmp(l.text[1], "WRN sar-dfsssp:  23 of 4096", 27));
	CHECK(l.widest <= 100);
	CHECK(!strcmp(l.joined, msg));
}

/* Without "; ", after ", "; without either, at a blank; without any, a hard cut. */
static void test_weaker_separators(void)
{
	struct lines l;
	char word[299];

	split(&l, "x: aaaa aaaa aaaa aaaa aaaa, bbbb bbbb bbbb bbbb bbbb bbbb bbbb bbbb bbbb bbbb",
	      60);
	CHECK(l.n == 2);
	CHECK(!strcmp(l.text[0], "x: aaaa aaaa aaaa aaaa aaaa,"));
	CHECK(!strncmp(l.text[1], "x:  bbbb", 8));
	CHECK(l.widest <= 60);

	split(&l,
	      "no tag at all and blanks only, aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj",
	      40);
	CHECK(l.n >= 3);
	CHECK(l.widest <= 40);
	CHECK(l.text[1][0] == ' ' && l.text[1][1] != ' ');

	memset(word, 'z', sizeof(word) - 1);
	word[sizeof(word) - 1] = '\0';
	split(&l, word, 100);
	CHECK(l.n == 3);
	CHECK(l.widest == 100);
	CHECK(strlen(l.text[2]) == 1 + 99);
}

/* A long message of many clauses: every line within the width, nothing lost. */
static void test_nothing_lost(void)
{
	char msg[1200];
	struct lines l;
	size_t used = 0;
	unsigned i;

	used += (size_t)snprintf(msg, sizeof(msg), "sar-dmodk: ");
	for (i = 0; i < 30; i++)
		used += (size_t)snprintf(msg + used, sizeof(msg) - used, "%sclause %u holds %u",
					 i ? "; " : "", i, i * 7);
	split(&l, msg, 120);
	CHECK(l.n > 3 && l.n < 16);
	CHECK(l.widest <= 120);
	for (i = 1; i < l.n && i < 16; i++)
		CHECK(!strncmp(l.text[i], "sar-dmodk:  clause", 18));
	CHECK(!strcmp(l.joined, msg));
}

int main(void)
{
	test_short_message_whole();
	test_tags();
	test_cut_at_semicolon();
	test_weaker_separators();
	test_nothing_lost();
	return CHECK_RESULT();
}
