/*
 * job_pair - one side of a client/server pair in fabtests' node/service
 * mode (fi_getinfo with a service, no address exchanged out of band), for
 * test/job/jobs.sh: which server does a client reach when two pairs use
 * the same service at once?
 *
 *   job_pair server <service> <token>
 *       opens an RDM endpoint holding <service> (FI_SOURCE), waits for one
 *       message (a client's token and address), answers with <token>.
 *   job_pair client <service> <token>
 *       finds the endpoint holding <service> (node "localhost"), sends its
 *       token and address, and prints the token of the server that
 *       answered: "reached <token>".
 *
 * Exit status: 0 done; 3 the service is held by another endpoint
 * (fi_endpoint: -FI_EADDRINUSE); 4 no answer within 20 s; 1 any other
 * error (printed).  Runs with whatever provider FI_PROVIDER names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#define TOKEN_MAX 64
#define NAME_MAX_LEN 64
#define WAIT_S 20

struct job_msg {
	char token[TOKEN_MAX];
	size_t namelen;
	char name[NAME_MAX_LEN];
};

struct pair {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	struct job_msg in, out;
};

static int fail(const char *what, int ret)
{
	fprintf(stderr, "job_pair: %s: %s\n", what, fi_strerror(-ret));
	return ret == -FI_EADDRINUSE ? 3 : 1;
}

/* Wait for one completion of the CQ: 0, 4 (timeout) or 1. */
static int wait_one(struct pair *p)
{
	struct fi_cq_tagged_entry e;
	time_t end = time(NULL) + WAIT_S;
	ssize_t n;

	while ((n = fi_cq_read(p->cq, &e, 1)) == -FI_EAGAIN)
		if (time(NULL) > end) {
			fprintf(stderr, "job_pair: no completion in %d s\n",
				WAIT_S);
			return 4;
		}
	if (n == 1)
		return 0;
	return fail("fi_cq_read", (int)n);
}

static int open_pair(struct pair *p, const char *node, const char *service,
		     uint64_t flags)
{
	struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_TAGGED};
	struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
	struct fi_info *hints = fi_allocinfo();
	int ret;

	if (!hints)
		return fail("fi_allocinfo", -FI_ENOMEM);
	hints->caps = FI_TAGGED;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
				      FI_MR_PROV_KEY | FI_MR_LOCAL;
	ret = fi_getinfo(FI_VERSION(1, 17), node, service, flags, hints,
			 &p->info);
	fi_freeinfo(hints);
	if (ret)
		return fail("fi_getinfo", ret);
	ret = fi_fabric(p->info->fabric_attr, &p->fabric, NULL);
	if (ret)
		return fail("fi_fabric", ret);
	ret = fi_domain(p->fabric, p->info, &p->domain, NULL);
	if (ret)
		return fail("fi_domain", ret);
	ret = fi_cq_open(p->domain, &cq_attr, &p->cq, NULL);
	if (ret)
		return fail("fi_cq_open", ret);
	ret = fi_av_open(p->domain, &av_attr, &p->av, NULL);
	if (ret)
		return fail("fi_av_open", ret);
	ret = fi_endpoint(p->domain, p->info, &p->ep, NULL);
	if (ret)
		return fail("fi_endpoint", ret);
	ret = fi_ep_bind(p->ep, &p->cq->fid, FI_TRANSMIT | FI_RECV);
	if (!ret)
		ret = fi_ep_bind(p->ep, &p->av->fid, 0);
	if (!ret)
		ret = fi_enable(p->ep);
	if (ret)
		return fail("fi_enable", ret);
	p->out.namelen = sizeof(p->out.name);
	ret = fi_getname(&p->ep->fid, p->out.name, &p->out.namelen);
	return ret ? fail("fi_getname", ret) : 0;
}

static int post_recv(struct pair *p)
{
	ssize_t ret = fi_trecv(p->ep, &p->in, sizeof(p->in), NULL,
			       FI_ADDR_UNSPEC, 1, 0, NULL);

	return ret ? fail("fi_trecv", (int)ret) : 0;
}

static int send_to(struct pair *p, fi_addr_t dest)
{
	ssize_t ret;

	do
		ret = fi_tsend(p->ep, &p->out, sizeof(p->out), NULL, dest, 1,
			       NULL);
	while (ret == -FI_EAGAIN && !fi_cq_read(p->cq, NULL, 0));
	return ret ? fail("fi_tsend", (int)ret) : wait_one(p);
}

static int server(struct pair *p, const char *service)
{
	fi_addr_t client;
	int ret;

	ret = open_pair(p, NULL, service, FI_SOURCE);
	if (!ret)
		ret = post_recv(p);
	if (!ret)
		ret = wait_one(p);
	if (ret)
		return ret;
	if (p->in.namelen > sizeof(p->in.name) ||
	    fi_av_insert(p->av, p->in.name, 1, &client, 0, NULL) != 1)
		return fail("fi_av_insert of the client", -FI_EINVAL);
	return send_to(p, client);
}

static int client(struct pair *p, const char *service)
{
	fi_addr_t server_addr;
	int ret;

	ret = open_pair(p, "localhost", service, 0);
	if (ret)
		return ret;
	if (fi_av_insert(p->av, p->info->dest_addr, 1, &server_addr, 0, NULL) !=
	    1)
		return fail("fi_av_insert of the server", -FI_EINVAL);
	ret = post_recv(p);
	if (!ret)
		ret = send_to(p, server_addr);
	if (!ret)
		ret = wait_one(p);
	if (ret)
		return ret;
	p->in.token[TOKEN_MAX - 1] = '\0';
	printf("reached %s\n", p->in.token);
	return 0;
}

int main(int argc, char **argv)
{
	struct pair p = {0};

	if (argc != 4 || strlen(argv[3]) >= TOKEN_MAX ||
	    (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
		fprintf(stderr, "usage: %s server|client <service> <token>\n",
			argv[0]);
		return 2;
	}
	snprintf(p.out.token, sizeof(p.out.token), "%s", argv[3]);
	return !strcmp(argv[1], "server") ? server(&p, argv[2])
					  : client(&p, argv[2]);
}
