/*
 * svg.c - the picture behind `sarnue check --svg`, in the manner of Domke's figures 5.2 and
 * 5.9: row = switch a channel leaves, column = switch it enters, colour = load, grey = a channel
 * no counted route uses (dark fiber); beside it the histogram of the loads and the hottest
 * channels.  Switches are ordered by level (hops from the switches with end ports), so a fat
 * tree shows its levels as blocks; above MAX_CELLS switches, consecutive switches share a row
 * and a column, each cell showing the highest load of its channels, and the hottest channels
 * are outlined whatever the cell size.  The colour scale runs from the least used channel's
 * load to the highest.  Plain SVG 1.1 with no external references.
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
#define MAX_CELLS 160	    /* rows and columns at most: larger fabrics group switches */
#define LABEL_MIN_CELL 10.0 /* smaller cells and the names would overlap */
#define LABEL_CHARS 24	    /* longer names are cut: the labels must stay off the map */
#define HIST_BINS 24
#define HOT_SHOWN 10 /* hottest channels outlined and listed */
#define HOT_MIN_MARK 6.0

struct rgb {
	double r, g, b;
};

/*
 * Blue for the lightest used channel through yellow to dark red for the heaviest: the scale runs
 * from lo (the least load above 0) to hi, so that a balanced 35..39 spread shows its spread.
 */
static void load_colour(uint64_t v, uint64_t lo, uint64_t hi, char *buf, size_t len)
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
	v = v < lo ? lo : v;
	t = hi > lo ? (double)(v - lo) / (double)(hi - lo) : 1.0;
	t = t > 1.0 ? 1.0 : t;
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

/*
 * Where each switch goes on the axes: by level (hops from the nearest switch with an end port,
 * so a fat tree's leaves come first, then each level up), then by index; on large fabrics
 * `group` consecutive switches share a row and a column.
 */
struct axes {
	uint32_t *pos;	 /* [nswitches]: position of the switch on the axes */
	uint32_t *level; /* [nswitches] */
	uint32_t *order; /* [nswitches]: switch at each position */
	uint32_t group;	 /* switches per row and column */
	uint32_t cells;	 /* rows (= columns) */
	double cell;	 /* their size in pixels */
	uint64_t lo, hi; /* the colour scale: least load above 0, and the highest */
};

/* Breadth-first levels from the switches with end ports; switches without any path: last. */
static void switch_levels(const struct fabric *f, uint32_t *level, uint32_t *queue)
{
	uint32_t n = f->nswitches, head = 0, tail = 0, s, c;

	for (s = 0; s < n; s++) {
		level[s] = fabric_switch_has_end_ports(f, s) ? 0 : UINT32_MAX;
		if (!level[s])
			queue[tail++] = s;
	}
	while (head < tail) {
		s = queue[head++];
		for (c = f->sw_adj_off[s]; c < f->sw_adj_off[s + 1]; c++) {
			uint32_t t = to_sw(f, c);

			if (level[t] == UINT32_MAX) {
				level[t] = level[s] + 1;
				queue[tail++] = t;
			}
		}
	}
}

static int cmp_by_level(const void *a, const void *b, void *ctx)
{
	const uint32_t *level = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (level[x] != level[y])
		return level[x] < level[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

static void axes_free(struct axes *ax)
{
	free(ax->pos);
	free(ax->level);
	free(ax->order);
}

static int axes_build(const struct fabric *f, const uint64_t *load, struct axes *ax)
{
	uint32_t n = f->nswitches, i, nch = f->sw_adj_off[n];

	memset(ax, 0, sizeof(*ax));
	ax->pos = malloc(sizeof(*ax->pos) * (n + 1));
	ax->level = malloc(sizeof(*ax->level) * (n + 1));
	ax->order = malloc(sizeof(*ax->order) * (n + 1));
	if (!ax->pos || !ax->level || !ax->order) {
		axes_free(ax);
		return -1;
	}
	switch_levels(f, ax->level, ax->pos);
	for (i = 0; i < n; i++)
		ax->order[i] = i;
	qsort_r(ax->order, n, sizeof(*ax->order), cmp_by_level, ax->level);
	for (i = 0; i < n; i++)
		ax->pos[ax->order[i]] = i;
	ax->group = n > MAX_CELLS ? (n + MAX_CELLS - 1) / MAX_CELLS : 1;
	ax->cells = n ? (n + ax->group - 1) / ax->group : 1;
	ax->cell = MAP_SIZE / ax->cells;
	ax->lo = UINT64_MAX;
	for (i = 0; i < nch; i++) {
		if (load[i] && load[i] < ax->lo)
			ax->lo = load[i];
		if (load[i] > ax->hi)
			ax->hi = load[i];
	}
	if (ax->lo == UINT64_MAX)
		ax->lo = 1;
	return 0;
}

static uint32_t cell_of(const struct axes *ax, uint32_t sw)
{
	return ax->pos[sw] / ax->group;
}

/* A switch name as a label: its first LABEL_CHARS characters, ".." when cut. */
static void label_text(FILE *out, const char *name)
{
	char buf[LABEL_CHARS + 3];

	if (strlen(name) <= LABEL_CHARS) {
		xml_text(out, name);
		return;
	}
	snprintf(buf, sizeof(buf), "%.*s..", LABEL_CHARS, name);
	xml_text(out, buf);
}

/* Names on the axes while they fit; else a line and a label where each level starts. */
static void axis_labels(FILE *out, const struct fabric *f, const struct axes *ax)
{
	uint32_t i, s;

	if (ax->group == 1 && ax->cell >= LABEL_MIN_CELL) {
		for (i = 0; i < f->nswitches; i++) {
			const char *name = fabric_node_desc(f, f->switches[ax->order[i]]);
			double c = (i + 0.5) * ax->cell;

			fprintf(out,
				"<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\" "
				"font-size=\"9\">",
				MAP_X - 4, MAP_Y + c + 3);
			label_text(out, name);
			/* below the map, slanted down, clear of the title above it */
			fprintf(out,
				"</text>\n<text transform=\"translate(%.2f %.2f) rotate(60)\" "
				"font-size=\"9\">",
				MAP_X + c - 2, MAP_Y + MAP_SIZE + 6);
			label_text(out, name);
			fputs("</text>\n", out);
		}
		return;
	}
	for (i = 0; i < f->nswitches; i++) {
		double at;

		s = ax->order[i];
		if (i && ax->level[ax->order[i - 1]] == ax->level[s])
			continue;
		at = (double)i / ax->group * ax->cell;
		fprintf(out,
			"<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#606060\" "
			"stroke-dasharray=\"3 3\"/>\n"
			"<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#606060\" "
			"stroke-dasharray=\"3 3\"/>\n",
			MAP_X, MAP_Y + at, MAP_X + MAP_SIZE, MAP_Y + at, MAP_X + at, MAP_Y,
			MAP_X + at, MAP_Y + MAP_SIZE);
		if (ax->level[s] == UINT32_MAX)
			fprintf(out,
				"<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\" font-size=\"10\">"
				"unreached</text>\n",
				MAP_X - 4, MAP_Y + at + 11);
		else
			fprintf(out,
				"<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\" font-size=\"10\">"
				"level %u</text>\n",
				MAP_X - 4, MAP_Y + at + 11, ax->level[s]);
	}
}

/* One cell per pair of axis positions: the highest load of the channels it holds. */
struct cell {
	uint64_t top;
	uint32_t channels;
};

static void cell_title(FILE *out, const struct fabric *f, const struct axes *ax, uint32_t a,
		       uint32_t b, const struct cell *c)
{
	fputs("<title>", out);
	if (ax->group == 1) {
		xml_text(out, fabric_node_desc(f, f->switches[ax->order[a]]));
		fputs(" -&gt; ", out);
		xml_text(out, fabric_node_desc(f, f->switches[ax->order[b]]));
	} else {
		fprintf(out, "switches %u-%u -&gt; %u-%u", a * ax->group, (a + 1) * ax->group - 1,
			b * ax->group, (b + 1) * ax->group - 1);
	}
	fprintf(out, ": %" PRIu64 " (%u channel%s)</title>", c->top, c->channels,
		c->channels == 1 ? "" : "s");
}

static int heat_map(FILE *out, const struct fabric *f, const uint64_t *load, const struct axes *ax)
{
	uint32_t nch = f->sw_adj_off[f->nswitches], i, a, b, k = ax->cells;
	struct cell *grid = calloc((size_t)k * k, sizeof(*grid));
	char colour[16];

	if (!grid)
		return -1;
	for (i = 0; i < nch; i++) {
		struct cell *c =
			&grid[(size_t)cell_of(ax, from_sw(f, i)) * k + cell_of(ax, to_sw(f, i))];

		c->top = load[i] > c->top ? load[i] : c->top;
		c->channels++;
	}
	fprintf(out,
		"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#ffffff\" "
		"stroke=\"#808080\"/>\n",
		MAP_X, MAP_Y, MAP_SIZE, MAP_SIZE);
	for (a = 0; a < k; a++) {
		for (b = 0; b < k; b++) {
			const struct cell *c = &grid[(size_t)a * k + b];

			if (!c->channels)
				continue;
			load_colour(c->top, ax->lo, ax->hi, colour, sizeof(colour));
			fprintf(out,
				"<rect x=\"%.3f\" y=\"%.3f\" width=\"%.3f\" height=\"%.3f\" "
				"fill=\"%s\">",
				MAP_X + b * ax->cell, MAP_Y + a * ax->cell, ax->cell, ax->cell,
				colour);
			cell_title(out, f, ax, a, b, c);
			fputs("</rect>\n", out);
		}
	}
	free(grid);
	axis_labels(out, f, ax);
	fprintf(out,
		"<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">to switch%s"
		"</text>\n<text transform=\"translate(%.1f %.1f) rotate(-90)\" font-size=\"12\" "
		"text-anchor=\"middle\">from switch</text>\n",
		MAP_X + MAP_SIZE / 2,
		MAP_Y + MAP_SIZE + (ax->group == 1 && ax->cell >= LABEL_MIN_CELL ? 122 : 22),
		ax->group > 1 ? " (each cell: the highest of its switches' channels)" : "",
		MAP_X - 120, MAP_Y + MAP_SIZE / 2);
	return 0;
}

/* The channels with the highest loads, heaviest first (ties by channel), at most HOT_SHOWN. */
static uint32_t hottest(const struct fabric *f, const uint64_t *load, uint32_t *top)
{
	uint32_t nch = f->sw_adj_off[f->nswitches], n = 0, i, j;

	for (i = 0; i < nch; i++) {
		if (!load[i] || (n == HOT_SHOWN && load[i] <= load[top[n - 1]]))
			continue;
		j = n < HOT_SHOWN ? n++ : n - 1;
		for (; j > 0 && load[top[j - 1]] < load[i]; j--)
			top[j] = top[j - 1];
		top[j] = i;
	}
	return n;
}

/*
 * Marks the hottest channels' cells with an outline at least HOT_MIN_MARK wide, so that they
 * show whatever the cell size, and lists them beside the map.
 */
static void hot_channels(FILE *out, const struct fabric *f, const uint64_t *load,
			 const struct axes *ax)
{
	uint32_t top[HOT_SHOWN], n = hottest(f, load, top), i;
	double mark = ax->cell > HOT_MIN_MARK ? ax->cell : HOT_MIN_MARK;
	double y = HIST_Y + HIST_H + 140;

	if (!n)
		return;
	fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\">Hottest channels</text>\n",
		HIST_X, y);
	for (i = 0; i < n; i++) {
		uint32_t ch = top[i], a = cell_of(ax, from_sw(f, ch)),
			 b = cell_of(ax, to_sw(f, ch));
		double cx = MAP_X + (b + 0.5) * ax->cell, cy = MAP_Y + (a + 0.5) * ax->cell;
		const struct fab_port *p = &f->ports[f->sw_adj_port[ch]];

		fprintf(out,
			"<rect x=\"%.3f\" y=\"%.3f\" width=\"%.3f\" height=\"%.3f\" fill=\"none\" "
			"stroke=\"#000000\" stroke-width=\"1.5\"/>\n",
			cx - mark / 2, cy - mark / 2, mark, mark);
		fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">%" PRIu64 "  ", HIST_X,
			y + 16 * (i + 1), load[ch]);
		xml_text(out, fabric_node_desc(f, p->node));
		fprintf(out, " port %u -&gt; ", p->num);
		xml_text(out, fabric_node_desc(f, f->ports[p->remote].node));
		fputs("</text>\n", out);
	}
}

static void legend(FILE *out, uint64_t lo, uint64_t hi)
{
	char colour[16];
	unsigned k;
	double x = HIST_X, y = HIST_Y + HIST_H + 90;

	fprintf(out, "<defs><linearGradient id=\"ramp\" x1=\"0\" x2=\"1\" y1=\"0\" y2=\"0\">\n");
	for (k = 0; k <= 8; k++) {
		uint64_t v = lo + (hi > lo ? (hi - lo) * k / 8 : 0);

		load_colour(v ? v : 1, lo, hi, colour, sizeof(colour));
		fprintf(out, "<stop offset=\"%.3f\" stop-color=\"%s\"/>\n", k / 8.0, colour);
	}
	fprintf(out,
		"</linearGradient></defs>\n"
		"<rect x=\"%.1f\" y=\"%.1f\" width=\"20\" height=\"14\" fill=\"#d9d9d9\" "
		"stroke=\"#808080\"/>\n"
		"<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">0 (dark fiber)</text>\n"
		"<rect x=\"%.1f\" y=\"%.1f\" width=\"240\" height=\"14\" fill=\"url(#ramp)\" "
		"stroke=\"#808080\"/>\n"
		"<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">%" PRIu64 "</text>\n"
		"<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%" PRIu64
		"</text>\n",
		x, y, x + 26, y + 11, x + 130, y, x + 130, y + 28, lo, x + 370, y + 28, hi);
}

/*
 * The loads' histogram over the colour scale's range (least load above 0 to the highest), so
 * that a narrow spread fills the bars; the dark fiber (load 0) gets a grey bar of its own.
 */
struct bins {
	uint64_t count[HIST_BINS + 1]; /* [0]: dark fiber; [1..n]: the ranges */
	uint64_t width, top;
	uint32_t n;
};

static void bin_loads(const struct fabric *f, const uint64_t *load, const struct axes *ax,
		      struct bins *h)
{
	uint32_t nch = f->sw_adj_off[f->nswitches], i;
	uint64_t span = ax->hi >= ax->lo ? ax->hi - ax->lo + 1 : 1;

	memset(h, 0, sizeof(*h));
	h->n = span < HIST_BINS ? (uint32_t)span : HIST_BINS;
	h->width = (span + h->n - 1) / h->n;
	h->n = (uint32_t)((span + h->width - 1) / h->width);
	for (i = 0; i < nch; i++)
		h->count[load[i] ? 1 + (load[i] - ax->lo) / h->width : 0]++;
	h->top = 1;
	for (i = 0; i <= h->n; i++)
		h->top = h->count[i] > h->top ? h->count[i] : h->top;
}

static void histogram_bar(FILE *out, const struct bins *h, const struct axes *ax, uint32_t b)
{
	double bw = HIST_W / (h->n + 1), x = HIST_X + b * bw;
	double ht = HIST_H * (double)h->count[b] / (double)h->top;
	uint64_t lo = b ? ax->lo + (b - 1) * h->width : 0, hi = b ? lo + h->width - 1 : 0;
	char colour[16];

	load_colour(b ? lo + h->width / 2 : 0, ax->lo, ax->hi, colour, sizeof(colour));
	fprintf(out,
		"<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\" "
		"stroke=\"#404040\"><title>%" PRIu64 "-%" PRIu64 ": %" PRIu64
		" channels</title></rect>\n",
		x + 1, HIST_Y + HIST_H - ht, bw - 2, ht, colour, lo, hi, h->count[b]);
	fprintf(out,
		"<text x=\"%.2f\" y=\"%.2f\" font-size=\"9\" text-anchor=\"middle\">%" PRIu64
		"</text>\n",
		x + bw / 2, HIST_Y + HIST_H - ht - 3, h->count[b]);
	fprintf(out,
		"<text transform=\"translate(%.2f %.2f) rotate(-60)\" font-size=\"9\" "
		"text-anchor=\"end\">%" PRIu64 "%s</text>\n",
		x + bw / 2, HIST_Y + HIST_H + 12, lo, b && h->width > 1 ? "-" : "");
}

static void histogram(FILE *out, const struct fabric *f, const uint64_t *load,
		      const struct axes *ax)
{
	struct bins h;
	uint32_t b;

	bin_loads(f, load, ax, &h);
	fprintf(out,
		"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000000\"/>\n"
		"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000000\"/>\n",
		HIST_X, HIST_Y + HIST_H, HIST_X + HIST_W, HIST_Y + HIST_H, HIST_X, HIST_Y, HIST_X,
		HIST_Y + HIST_H);
	for (b = 0; b <= h.n; b++)
		histogram_bar(out, &h, ax, b);
	fprintf(out,
		"<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">routes per "
		"channel (first bar: unused; then bins of %" PRIu64 ")</text>\n"
		"<text transform=\"translate(%.1f %.1f) rotate(-90)\" font-size=\"12\" "
		"text-anchor=\"middle\">channels</text>\n",
		HIST_X + HIST_W / 2, HIST_Y + HIST_H + 70, h.width, HIST_X - 30,
		HIST_Y + HIST_H / 2);
}

static int write_svg(FILE *out, const struct fabric *f, const uint64_t *load,
		     const struct metrics_dist *d, const char *title)
{
	struct axes ax;

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
	if (axes_build(f, load, &ax))
		return -1;
	if (heat_map(out, f, load, &ax)) {
		axes_free(&ax);
		return -1;
	}
	fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\">Histogram</text>\n", HIST_X,
		HIST_Y - 20);
	histogram(out, f, load, &ax);
	legend(out, ax.lo, ax.hi);
	hot_channels(out, f, load, &ax);
	axes_free(&ax);
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
