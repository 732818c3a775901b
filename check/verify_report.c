/*
 * verify_report.c - the verifier's report: its verdict and how it is printed, as text for
 * operators and as JSON for scripts (sarnue check, sarnue route, the bench).  The checks that
 * fill it are in verify.c and mcastcheck.c.
 */
#include <inttypes.h>
#include <stdio.h>

#include "check/verify.h"
#include "lib/json.h"

int verify_ok(const struct verify_report *rep)
{
	return !rep->unreachable && !rep->loops && !rep->credit_loop_vls && !rep->mcast_unreached &&
	       !rep->mcast_loops;
}

unsigned verify_count_bits(uint16_t mask)
{
	return (unsigned)__builtin_popcount(mask);
}

void verify_print_text(const struct verify_report *rep, FILE *out)
{
	unsigned h;

	fprintf(out,
		"pairs checked:   %" PRIu64 " (%" PRIu64 " source ports, %" PRIu64
		" destination LIDs)\n",
		rep->pairs, rep->sources, rep->destinations);
	fprintf(out, "unreachable:     %" PRIu64 "\n", rep->unreachable);
	if (rep->unreachable)
		fprintf(out, "  first: %s\n", rep->first_unreachable);
	fprintf(out, "forwarding loops: %" PRIu64 "\n", rep->loops);
	if (rep->loops)
		fprintf(out, "  first: %s\n", rep->first_loop);
	fprintf(out, "credit loops:    %u\n", rep->credit_loop_vls ? 1u : 0u);
	if (rep->credit_loop_vls)
		fprintf(out, "  cycle (%u channels): %s\n", rep->cycle_len, rep->cycle);
	fprintf(out, "dependencies:    %" PRIu64 "\n", rep->dependencies);
	if (rep->mcast_groups) {
		fprintf(out,
			"multicast:       %u groups, %u members, %" PRIu64
			" dependencies, %u unreached members, %u broken trees\n",
			rep->mcast_groups, rep->mcast_members, rep->mcast_dependencies,
			rep->mcast_unreached, rep->mcast_loops);
		if (*rep->first_mcast_problem)
			fprintf(out, "  first: %s\n", rep->first_mcast_problem);
		if (rep->cycle_mixed)
			fprintf(out, "  the cycle above mixes unicast and multicast dependencies\n");
	}
	fprintf(out, "SLs used:        %u\nVLs used:        %u\n", verify_count_bits(rep->sls_used),
		verify_count_bits(rep->vls_used));
	fprintf(out, "hops:            min %u, max %u, mean %.3f\n", rep->min_hops, rep->max_hops,
		rep->mean_hops);
	fprintf(out, "hop histogram:  ");
	for (h = 0; h <= VERIFY_MAX_HOPS; h++)
		if (rep->hop_hist[h])
			fprintf(out, " %u:%" PRIu64, h, rep->hop_hist[h]);
	fprintf(out, "\nverdict:         %s\n", verify_ok(rep) ? "OK" : "FAILED");
}

void verify_print_json_fields(const struct verify_report *rep, const char *engine, FILE *out)
{
	unsigned h, first = 1;

	fprintf(out, "\"engine\": ");
	json_write_string(out, engine ? engine : "");
	fprintf(out,
		", \"pairs\": %" PRIu64 ", \"sources\": %" PRIu64 ", \"destinations\": %" PRIu64
		", \"unreachable\": %" PRIu64 ", \"forwarding_loops\": %" PRIu64
		", \"credit_loops\": %u, \"credit_loop_vls\": %u, \"dependencies\": %" PRIu64
		", \"sls_used\": %u, \"vls_used\": %u, \"hops\": {\"min\": %u, \"max\": %u, "
		"\"mean\": %.4f, \"histogram\": {",
		rep->pairs, rep->sources, rep->destinations, rep->unreachable, rep->loops,
		rep->credit_loop_vls ? 1 : 0, rep->credit_loop_vls, rep->dependencies,
		verify_count_bits(rep->sls_used), verify_count_bits(rep->vls_used), rep->min_hops,
		rep->max_hops, rep->mean_hops);
	for (h = 0; h <= VERIFY_MAX_HOPS; h++) {
		if (!rep->hop_hist[h])
			continue;
		fprintf(out, "%s\"%u\": %" PRIu64, first ? "" : ", ", h, rep->hop_hist[h]);
		first = 0;
	}
	fprintf(out, "}}, \"first_unreachable\": ");
	json_write_string(out, rep->first_unreachable);
	fprintf(out, ", \"first_loop\": ");
	json_write_string(out, rep->first_loop);
	fprintf(out, ", \"cycle\": ");
	json_write_string(out, rep->cycle);
	fprintf(out,
		", \"multicast\": {\"groups\": %u, \"members\": %u, \"dependencies\": %" PRIu64
		", \"unreached_members\": %u, \"broken_trees\": %u, \"cycle_mixed\": %s, "
		"\"first_problem\": ",
		rep->mcast_groups, rep->mcast_members, rep->mcast_dependencies, rep->mcast_unreached,
		rep->mcast_loops, rep->cycle_mixed ? "true" : "false");
	json_write_string(out, rep->first_mcast_problem);
	fputc('}', out);
	fprintf(out, ", \"ok\": %s", verify_ok(rep) ? "true" : "false");
}

void verify_print_json(const struct verify_report *rep, const char *engine, FILE *out)
{
	fputc('{', out);
	verify_print_json_fields(rep, engine, out);
	fputs("}\n", out);
}
