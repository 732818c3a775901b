/*
 * svg.c - the picture behind `sarnue check --svg`, in the manner of Domke's figures 5.2 and
 * 5.9: row = switch a channel leaves, column = switch it enters, colour = load, grey = a channel
 * no counted route uses (dark fiber); beside it the histogram of the loads.  Parallel channels
 * between two switches share a cell, which shows the highest of their loads.  Plain SVG 1.1
 * with no external references, so any browser or converter shows it as written.
 */
#include "cli/svg.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MAP_X 150.0
#define MAP_Y 70.0
#define MAP_SIZE 640.0
#define HIST_X 880.0
#define HIST_Y 110.0
#define HIST_W 420.0
#define HIST_H 300.0
#define WIDTH 1360
#define HEIGHT 840
#define LABELLED_SWITCHES 48 /* more than this and the names would overlap */

struct rgb {
	double r, g, b;
};

/* Blue for light load through yellow to dark red for the heaviest channel. */
static void load_colour(uint64_t v, uint64_t max, char *buf, size_t len)
{
	static const struct rgb stop[] = { { 49, 54, 149 },
					   { 69, 117, 180 },
					   { 254, 224, 144 },
					   { 244, 109, 67 },
					   { 165, 0, 38 } };
	double t, x;
	unsigned k;

	if (!v) {
		snprintf(buf, len, "#d9d9d9");
		return;
	}
	t = max > 1 ? (double)(v - 1) / (double)(max - 1) : 1.0;
	x = t * 4.0;
	k = x >= 4.0 ? 3 : (unsigned)x;
	x -= k;
	snprintf(buf, len, "#%02x%02x%02x", (unsigned)(stop[k].r + x * (stop[k + 1].r - stop[k].r)),
		 (unsigned)(stop[k].g + x * (stop[k + 1].g - stop[k].g)),
		 (unsigned)(stop[k].b + x * (stop[k + 1].b - stop[k].b)));
}

static void xml_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '&':
			fputs("&amp;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		default:
			/* Control characters are not allowed in XML 1.0 text. */
			fputc((unsigned char)*s < 0x20 ? ' ' : *s, out);
		}
	}
}

static uint32_t from_sw(const struct fabric *f, uint32_t ch)
{
	return f->nodes[f->ports[f->sw_adj_port[ch]].node].sw;
}

static uint32_t to_sw(const struct fabric *f, uint32_t ch)
{
	return f->nodes[f->ports[f->ports[f->sw_adj_port[ch]].remote].node].sw;
}

static int cmp_cell(const void *a, const void *b, void *ctx)
{
	const struct fabric *f = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t kx = (uint64_t)from_sw(f, x) << 32 | to_sw(f, x);
	uint64_t ky = (uint64_t)from_sw(f, y) << 32 | to_sw(f, y);

	return kx < ky ? -1 : kx > ky;
}

static void switch_labels(FILE *out, const struct fabric *f, double cell)
{
	uint32_t s;

	if (f->nswitches > LABELLED_SWITCHES)
		return;
	for (s = 0; s < f->nswitches; s++) {
		const char *name = fabric_node_desc(f, f->switches[s]);
		double c = (s + 0.5) * cell;

		fprintf(out, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\" font-size=\"9\">",
			MAP_X - 4, MAP_Y + c + 3);
		xml_text(out, name);
		fprintf(out,
			"</text>\n<text transform=\"translate(%.2f %.2f) rotate(-60)\" "
			"font-size=\"9\">",
			MAP_X + c + 3, MAP_Y - 4);
		xml_text(out, name);
		fputs("</text>\n", out);
	}
}

/* One cell per (from, to) switch pair, sorted so parallel channels are adjacent. */
static int heat_map(FILE *out, const struct fabric *f, const uint64_t *load, uint64_t max)
{
	uint32_t nch = f->sw_adj_off[f->nswitches], i, j, *idx;
	double cell = f->nswitches ? MAP_SIZE / f->nswitches : MAP_SIZE;
	char colour[16];

	idx = malloc(sizeof(*idx) * (nch + 1));
	if (!idx)
		return -1;
	for (i = 0; i < nch; i++)
		idx[i] = i;
	qsort_r(idx, nch, sizeof(*idx), cmp_cell, (void *)f);
	fprintf(out,
		"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#ffffff\" "
		"stroke=\"#808080\"/>\n",
		MAP_X, MAP_Y, MAP_SIZE, MAP_SIZE);
	for (i = 0; i < nch; i = j) {
		uint32_t a = from_sw(f, idx[i]), b = to_sw(f, idx[i]);
		uint64_t top = 0;

		for (j = i; j < nch && from_sw(f, idx[j]) == a && to_sw(f, idx[j]) == b; j++)
			top = load[idx[j]] > top ? load[idx[j]] : top;
		load_colour(top, max, colour, sizeof(colour));
		fprintf(out,
			"<rect x=\"%.3f\" y=\"%.3f\" width=\"%.3f\" height=\"%.3f\" fill=\"%s\">"
			"<title>",
			MAP_X + b * cell, MAP_Y + a * cell, cell, cell, colour);
		xml_text(out, fabric_node_desc(f, f->switches[a]));
		fputs(" -&gt; ", out);
		xml_text(out, fabric_node_desc(f, f->switches[b]));
		fprintf(out, ": %" PRIu64 " (%u channel%s)</title></rect>\n", top, j - i,
			j - i == 1 ? "" : "s");
	}
	switch_labels(out, f, cell);
	fprintf(out,
		"<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">to switch"
		"</text>\n<text transform=\"translate(%.1f %.1f) rotate(-90)\" font-size=\"12\" "
		"text-anchor=\"middle\">from switch</text>\n",
		MAP_X + MAP_SIZE / 2, MAP_Y + MAP_SIZE + 22, MAP_X - 120, MAP_Y + MAP_SIZE / 2);
	free(idx);
	return 0;
}

static void legend(FILE *out, uint64_t max)
{
	char colour[16];
	unsigned k;
	double x = HIST_X, y = HIST_Y + HIST_H + 90;

	fprintf(out, "<defs><linearGradient id=\"ramp\" x1=\"0\" x2=\"1\" y1=\"0\" y2=\"0\">\n");
	for (k = 0; k <= 8; k++) {
		uint64_t v = max > 1 ? 1 + (max - 1) * k / 8 : 1;

		load_colour(v, max ? max : 1, colour, sizeof(colour));
		fprintf(out, "<stop offset=\"%.3f\" stop-color=\"%s\"/>\n", k / 8.0, colour);
	}
	fprintf(out,
		"</linearGradient></defs>\n"
		"<rect x=\"%.1f\" y=\"%.1f\" width=\"20\" height=\"14\" fill=\"#d9d9d9\" "
		"stroke=\"#808080\"/>\n"
		"<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">0 (dark fiber)</text>\n"
		"<rect x=\"%.1f\" y=\"%.1f\" width=\"240\" height=\"14\" fill=\"url(#ramp)\" "
		"stroke=\"#808080\"/>\n"
		"<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">1</text>\n"
		"<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%" PRIu64
		"</text>\n",
		x, y, x + 26, y + 11, x + 130, y, x + 130, y + 28, x + 370, y + 28, max);
}

static void histogram(FILE *out, const struct metrics_dist *d)
{
	uint64_t top = 1;
	double bw;
	uint32_t b;
	char colour[16];

	for (b = 0; b < d->nbins; b++)
		top = d->bins[b] > top ? d->bins[b] : top;
	bw = d->nbins ? HIST_W / d->nbins : HIST_W;
	fprintf(out,
		"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000000\"/>\n"
		"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000000\"/>\n",
		HIST_X, HIST_Y + HIST_H, HIST_X + HIST_W, HIST_Y + HIST_H, HIST_X, HIST_Y, HIST_X,
		HIST_Y + HIST_H);
	for (b = 0; b < d->nbins; b++) {
		double h = HIST_H * (double)d->bins[b] / (double)top;
		uint64_t lo = b * d->bin_width, hi = lo + d->bin_width - 1;

		load_colour(lo + d->bin_width / 2, d->max, colour, sizeof(colour));
		fprintf(out,
			"<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\" "
			"stroke=\"#404040\"><title>%" PRIu64 "-%" PRIu64 ": %" PRIu64
			" channels</title></rect>\n",
			HIST_X + b * bw + 1, HIST_Y + HIST_H - h, bw - 2, h, colour, lo, hi,
			d->bins[b]);
		fprintf(out,
			"<text x=\"%.2f\" y=\"%.2f\" font-size=\"9\" text-anchor=\"middle\">%" PRIu64
			"</text>\n",
			HIST_X + (b + 0.5) * bw, HIST_Y + HIST_H - h - 3, d->bins[b]);
		fprintf(out,
			"<text transform=\"translate(%.2f %.2f) rotate(-60)\" font-size=\"9\" "
			"text-anchor=\"end\">%" PRIu64 "%s</text>\n",
			HIST_X + (b + 0.5) * bw, HIST_Y + HIST_H + 12, lo,
			d->bin_width > 1 ? "-" : "");
	}
	fprintf(out,
		"<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">routes per "
		"channel (bin width %" PRIu64 ")</text>\n"
		"<text transform=\"translate(%.1f %.1f) rotate(-90)\" font-size=\"12\" "
		"text-anchor=\"middle\">channels</text>\n",
		HIST_X + HIST_W / 2, HIST_Y + HIST_H + 55, d->bin_width, HIST_X - 30,
		HIST_Y + HIST_H / 2);
}

static int write_svg(FILE *out, const struct fabric *f, const uint64_t *load,
		     const struct metrics_dist *d, const char *title)
{
	fprintf(out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n"
		"<text x=\"20\" y=\"30\" font-size=\"16\">",
		WIDTH, HEIGHT, WIDTH, HEIGHT);
	xml_text(out, title);
	fprintf(out,
		"</text>\n<text x=\"20\" y=\"50\" font-size=\"12\">%u switches, %u directed "
		"switch-to-switch channels: min %" PRIu64 ", max %" PRIu64 ", mean %.2f, "
		"sdv %.2f, %u unused</text>\n",
		f->nswitches, d->channels, d->min, d->max, d->mean, d->sdv, d->zero);
	if (heat_map(out, f, load, d->max))
		return -1;
	fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\">Histogram</text>\n", HIST_X,
		HIST_Y - 20);
	histogram(out, d);
	legend(out, d->max);
	fputs("</svg>\n", out);
	return 0;
}

int svg_write_loads(const char *path, const struct fabric *f, const uint64_t *load,
		    const struct metrics_dist *dist, const char *title, struct fab_error *err)
{
	FILE *out = fopen(path, "w");
	int bad;

	if (!out) {
		fab_error_set(err, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (write_svg(out, f, load, dist, title)) {
		fclose(out);
		fab_error_set(err, "%s: out of memory", path);
		return -1;
	}
	bad = ferror(out);
	if (fclose(out) || bad) {
		fab_error_set(err, "%s: write error", path);
		return -1;
	}
	return 0;
}
