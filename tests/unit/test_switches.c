/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_switches.c - `collbench acceptance --switches FILE`'s
 * text (acceptance/switches.c): HOST LEAF lines, Slurm's topology.conf
 * with its host lists expanded as Slurm does, and the one line each bad
 * file gets; each host of a made-up job given its leaf.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acceptance/accept.h"
#include "check.h"
#include "core/log.h"

static struct cb_acc_switches *parse(const char *text)
{
	struct cb_acc_switches *s = NULL;

	cb_fail_clear();
	if (cb_acc_switches_parse(text, strlen(text), "t.conf", &s) != CB_OK)
		fprintf(stderr, "  refused: %s\n", cb_fail_msg());
	return s;
}

/* @host is under @leaf in @s (NULL: not named). */
static int under(const struct cb_acc_switches *s, const char *host,
                 const char *leaf)
{
	const char *got = cb_acc_switches_leaf(s, host, NULL);

	if (!got != !leaf || (got && strcmp(got, leaf))) {
		fprintf(stderr, "  %s: under '%s', want '%s'\n", host,
		        got ? got : "(none)", leaf ? leaf : "(none)");
		return 0;
	}
	return 1;
}

/* @text is refused with exactly @msg, and nothing handed back. */
static int refused(const char *text, const char *msg)
{
	struct cb_acc_switches *s = (void *)1;
	cb_status_t st;

	cb_fail_clear();
	st = cb_acc_switches_parse(text, strlen(text), "t.conf", &s);
	const char *got = cb_fail_msg() ? cb_fail_msg() : "";
	if (st != CB_ERR_USAGE || s != NULL || strcmp(got, msg)) {
		fprintf(stderr, "  '%s' -> %d '%s'\n    want '%s'\n", text, st,
		        got, msg);
		return 0;
	}
	return 1;
}

int main(void)
{
	struct cb_acc_switches *s;
	int nleaf = 0;

	/* HOST LEAF lines: comments, blanks, CRLF, a host twice alike */
	s = parse("# leaves\nnode1 leafA\r\n\n  node2\tleafA  # x\n"
	          "node3 leafB\nnode1 leafA\n");
	CHECK(s && cb_acc_switches_count(s, &nleaf) == 4 && nleaf == 2);
	CHECK(s && under(s, "node1", "leafA") && under(s, "node2", "leafA") &&
	      under(s, "node3", "leafB") && under(s, "node4", NULL) &&
	      under(s, "node", NULL));
	cb_acc_switches_free(s);

	/* Slurm's form: ranges with their width, lists, several brackets,
	 * terms beside brackets, keys in any case, a switch above leaves
	 * (no Nodes=) ignored, a line going on after '\' */
	s = parse("SwitchName=s1 Nodes=n[01-03,7],login\n"
	          "switchname=s2 nodes=r[1-2]c[8-9]x LinkSpeed=100\n"
	          "SwitchName=s3 \\\n Nodes=gpu[098-101]\n"
	          "SwitchName=top Switches=s[1-3]\n");
	CHECK(s && cb_acc_switches_count(s, &nleaf) == 13 && nleaf == 3);
	CHECK(s && under(s, "n01", "s1") && under(s, "n02", "s1") &&
	      under(s, "n03", "s1") && under(s, "n7", "s1") &&
	      under(s, "n07", NULL) && under(s, "n4", NULL) &&
	      under(s, "login", "s1"));
	CHECK(s && under(s, "r1c8x", "s2") && under(s, "r1c9x", "s2") &&
	      under(s, "r2c8x", "s2") && under(s, "r2c9x", "s2") &&
	      under(s, "r1c8", NULL));
	CHECK(s && under(s, "gpu098", "s3") && under(s, "gpu099", "s3") &&
	      under(s, "gpu100", "s3") && under(s, "gpu101", "s3") &&
	      under(s, "top", NULL) && under(s, "s1", NULL));

	/* the job's hosts given their leaves, numbered as they come */
	struct cb_acc_host hosts[3] = { { .name = "gpu100" },
		                        { .name = "n7" },
		                        { .name = "gpu099" } };
	struct cb_acc a = { .hosts = hosts, .nhosts = 3 };
	CHECK(s && cb_acc_switches_apply(s, &a) == CB_OK && a.nleaves == 2 &&
	      hosts[0].leaf == 0 && hosts[1].leaf == 1 && hosts[2].leaf == 0 &&
	      !strcmp(hosts[0].sw, "s3") && !strcmp(hosts[1].sw, "s1"));
	snprintf(hosts[1].name, sizeof(hosts[1].name), "n8");
	cb_fail_clear();
	CHECK(s && cb_acc_switches_apply(s, &a) == CB_ERR_USAGE &&
	      a.nleaves == 0 && cb_fail_msg() &&
	      !strcmp(cb_fail_msg(),
	              "--switches t.conf: host n8 of this job is not in it "
	              "(its leaf switch is not known)"));
	cb_acc_switches_free(s);

	/* the line each bad file gets */
	CHECK(refused("", "--switches t.conf: names no host"));
	CHECK(refused("# nothing\n\n", "--switches t.conf: names no host"));
	CHECK(refused("a x\nb y\na y\n",
	              "--switches t.conf: host a is under two switches, x "
	              "and y"));
	CHECK(refused("a\n", "--switches t.conf: line 1: not 'HOST LEAF' nor "
	                     "Slurm's 'SwitchName=S Nodes=HOSTS': 'a'"));
	CHECK(refused("a b\nc d e\n",
	              "--switches t.conf: line 2: not 'HOST LEAF' nor "
	              "Slurm's 'SwitchName=S Nodes=HOSTS': 'c d e'"));
	CHECK(refused("SwitchName=s Nodes=n[3-1]\n",
	              "--switches t.conf: line 1: a range that is not N or "
	              "N-M (N <= M) in 'n[3-1]'"));
	CHECK(refused("SwitchName=s Nodes=n[1-x]\n",
	              "--switches t.conf: line 1: a range that is not N or "
	              "N-M (N <= M) in 'n[1-x]'"));
	CHECK(refused("SwitchName=s Nodes=n[1-2\n",
	              "--switches t.conf: line 1: unbalanced brackets in "
	              "'n[1-2'"));
	CHECK(refused("SwitchName=s Nodes=n[[1]]\n",
	              "--switches t.conf: line 1: unbalanced brackets in "
	              "'n[[1]]'"));
	CHECK(refused("SwitchName=s Nodes=n[]\n",
	              "--switches t.conf: line 1: an empty range in 'n[]'"));
	CHECK(refused("SwitchName=s Nodes=a,,b\n",
	              "--switches t.conf: line 1: an empty host name in "
	              "'a,,b'"));
	CHECK(refused("SwitchName=s Nodes=n[0-1048576]\n",
	              "--switches t.conf: line 1: more than 1048576 hosts "
	              "in 'n[0-1048576]'"));
	CHECK(refused("SwitchName=s Nodes=n Speed=1\n",
	              "--switches t.conf: line 1: a key that is not "
	              "SwitchName, Nodes, Switches or LinkSpeed 'Speed=1'"));
	CHECK(refused("x\nNodes=n1\n",
	              "--switches t.conf: line 1: not 'HOST LEAF' nor "
	              "Slurm's 'SwitchName=S Nodes=HOSTS': 'x'"));
	CHECK(refused("a b\nNodes=n1\n",
	              "--switches t.conf: line 2: no SwitchName (of 1-31 "
	              "characters) on the line of 'Nodes=n1'"));
	CHECK(refused("a b\n\\\nSwitchName=s \\\nNodes=n1 Bad\n",
	              "--switches t.conf: line 2: a word that is not "
	              "KEY=VALUE 'Bad'"));
	{
		struct cb_acc_switches *t = NULL;
		cb_fail_clear();
		CHECK(cb_acc_switches_parse("a b\0c d\n", 8, "t.conf", &t) ==
		              CB_ERR_USAGE &&
		      !t && cb_fail_msg() &&
		      !strcmp(cb_fail_msg(), "--switches t.conf: a NUL byte: "
		                             "not a text file"));
	}
	char longname[80];
	memset(longname, 'h', 64);
	snprintf(longname + 64, sizeof(longname) - 64, " leaf\n");
	CHECK(refused(
	        longname,
	        "--switches t.conf: line 1: a host name over 63 "
	        "characters "
	        "'hhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh"
	        "hhh'"));
	CHECK(refused(
	        "SwitchName=s Nodes=hhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh"
	        "hhhhhhhhhhhhhhhhhhhhhhhhhhhh[1-2]\n",
	        "--switches t.conf: line 1: a host name over 63 "
	        "characters "
	        "'hhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh"
	        "hhh'"));
	return check_result("switches");
}
