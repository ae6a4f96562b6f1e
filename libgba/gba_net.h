/*
 * GBA core library: the emulated switch as a network service (internal).
 *
 * Device name "emu+tcp://HOST:PORT" (doc/design.md section 9, "The switch
 * across hosts").  Three programs share these definitions:
 *
 *   gba_switchd      the switch: one emulated register map (an ordinary
 *                    emu image, driven by gba_emu_switch.c) for all hosts
 *   gba_agent        the emulated NIC of one host/user/switch: forwards the
 *                    host's arrivals to gba_switchd and stores the releases
 *                    it receives into the host's release flags
 *   libgba (gba_net.c) the backend a member process uses: its doorbell is
 *                    a store into host-local memory, its flag is host-local
 *                    memory; join/leave are RPCs to gba_switchd
 *
 * Host-local state: an emu image per host/user/switch, named
 * "/gba-net-<uid>-<hash of HOST:PORT>" (gba_emu.c makes it).  Its register
 * map holds the host's view of each group (MEMBER_MASK: this host's
 * members; RELEASE_SEQ, STATUS, ERROR_INFO: mirrors of the switch's, stored
 * by the agent), its flag area the members' release flags, its control-
 * plane table this host's members.  The switch-private area of the image
 * (unused: the switch runs elsewhere) holds struct gba_net_shm: the
 * doorbell registers the members store to and the agent's state.
 */
#ifndef GBA_NET_H
#define GBA_NET_H

#include <stdint.h>

#include "gba_backend.h"

#define GBA_NET_PREFIX "emu+tcp://"
#define GBA_NET_DEFAULT_PORT 7447

/* ---- Wire protocol (TCP, little-endian, fixed 40-byte messages) -------- */

#define GBA_NET_VERSION 1

enum gba_net_type {
	/* agent -> switchd: a = host token, b = GBA_NET_VERSION; reply */
	GBA_NET_HELLO_AGENT = 1,
	/* process -> switchd: a = host token, b = GBA_NET_VERSION,
	 * c = the process's slot (gba_proc_self_slot); reply */
	GBA_NET_HELLO_PROC = 2,
	/* process -> switchd: a = key (job-scoped), b = (member_count << 32)
	 * | member_id, c = job id; reply: ret, g, a = generation,
	 * b = RELEASE_SEQ */
	GBA_NET_JOIN = 3,
	/* process -> switchd: g, a = generation, b = member; reply */
	GBA_NET_LEAVE = 4,
	/* process -> switchd: g, a = generation, b = ERROR_INFO (a member
	 * found dead on its host); no reply */
	GBA_NET_REPORT = 5,
	/* agent -> switchd: g, a = ARRIVAL doorbell value; no reply */
	GBA_NET_ARRIVE = 6,
	/* switchd -> agent: g, a = generation, b = released sequence */
	GBA_NET_RELEASE = 7,
	/* switchd -> agent: g, a = generation, b = ERROR_INFO */
	GBA_NET_ERROR = 8,
	/* switchd -> agent: group g allocated as generation a, RELEASE_SEQ
	 * b, before the reply to the first join from the agent's host */
	GBA_NET_ALLOC = 9,
	/* switchd -> process: ret (0 or a negative errno), g, a, b */
	GBA_NET_REPLY = 10,
};

struct gba_net_msg {
	uint32_t type;
	int32_t ret;
	uint32_t g;
	uint32_t pad;
	uint64_t a, b, c;
};

#define GBA_NET_MSG_SIZE 40

/* Encode @m into @buf (GBA_NET_MSG_SIZE bytes) / decode it. */
void gba_net_msg_put(uint8_t *buf, const struct gba_net_msg *m);
void gba_net_msg_get(const uint8_t *buf, struct gba_net_msg *m);

/*
 * gba_net_parse - split "emu+tcp://HOST:PORT" (HOST a name or IPv4/IPv6
 * literal, "[v6]:port" accepted; PORT 1..65535, default 7447) into @host
 * (@hlen bytes) and *@port.  Returns 0 or -EINVAL.
 */
int gba_net_parse(const char *name, char *host, size_t hlen, int *port);

/*
 * gba_net_connect - TCP connection to @host:@port with TCP_NODELAY and
 * keepalive (a peer gone silently is noticed in GBA_NET_KEEPALIVE_S
 * seconds), within @timeout_ms.  Returns the descriptor (close-on-exec)
 * or a negative errno (-ECONNREFUSED, -ETIMEDOUT, -EHOSTUNREACH,
 * -EINVAL for a name that does not resolve).
 */
int gba_net_connect(const char *host, int port, int timeout_ms);
/* Set TCP_NODELAY, keepalive and TCP_USER_TIMEOUT on @fd. */
void gba_net_tune(int fd);
#define GBA_NET_KEEPALIVE_S 4

/* Write all @len bytes of @buf to @fd (EINTR retried, MSG_NOSIGNAL);
 * 0 or a negative errno. */
int gba_net_write(int fd, const void *buf, size_t len);
/* Read exactly @len bytes within @timeout_ms (-1: no limit); 0, -EPIPE
 * at end of stream, -ETIMEDOUT, or a negative errno. */
int gba_net_read(int fd, void *buf, size_t len, int timeout_ms);
/* Send @m; 0 or a negative errno. */
int gba_net_send(int fd, const struct gba_net_msg *m);
/* Receive one message within @timeout_ms; 0 or a negative errno. */
int gba_net_recv(int fd, struct gba_net_msg *m, int timeout_ms);

/* ---- Host-local shared state (in the host image) ------------------------ */

#define GBA_NET_SHM_MAGIC 0x4d485354454e4721ULL /* "!GNETSHM" */

enum {
	GBA_NET_AGENT_NONE = 0,
	GBA_NET_AGENT_STARTING = 1,
	GBA_NET_AGENT_UP = 2,	  /* connected to gba_switchd */
	GBA_NET_AGENT_FAILED = 3, /* could not connect: agent_error */
	GBA_NET_AGENT_LOST = 4,	  /* lost gba_switchd */
};

/* Doorbell registers of a group: one per member, plus one (index
 * GBA_MAX_MEMBERS) for a doorbell naming no valid member. */
#define GBA_NET_DB_SLOTS (GBA_MAX_MEMBERS + 1)

struct gba_net_shm {
	uint64_t magic;	     /* set under the image lock by the first user */
	uint64_t host_token; /* identifies this host to gba_switchd */
	_Atomic uint32_t agent_state; /* GBA_NET_AGENT_* */
	_Atomic int32_t agent_error;  /* negative errno when FAILED */
	_Atomic uint64_t agent_slot;  /* the agent's process slot */
	/* generation of each group as this host knows it (ALLOC) */
	_Atomic uint32_t gen[GBA_MAX_GROUPS];

	/* futex word: 1 while the agent sleeps (a member then wakes it) */
	_Atomic uint32_t sleeping __attribute__((aligned(GBA_CACHE_LINE)));
	/* bit g: group g has pending doorbells */
	_Atomic uint32_t summary __attribute__((aligned(GBA_CACHE_LINE)));
	/* pending[g][w] bit b: doorbell register w * 64 + b was stored */
	_Atomic uint64_t pending[GBA_MAX_GROUPS][GBA_MASK_WORDS]
		__attribute__((aligned(GBA_CACHE_LINE)));
	/* the doorbell registers: the last value stored per member */
	_Atomic uint64_t db[GBA_MAX_GROUPS][GBA_NET_DB_SLOTS]
		__attribute__((aligned(GBA_CACHE_LINE)));
};

_Static_assert(sizeof(struct gba_net_shm) <=
		       GBA_MAX_GROUPS * sizeof(struct gba_emu_sw),
	       "gba_net_shm fits the switch-private area of an emu image");
_Static_assert(GBA_NET_DB_SLOTS <= GBA_MASK_WORDS * 64, "pending bits");

/* The host-shared state of an emu image mapped at @base. */
static inline struct gba_net_shm *gba_net_shm_of(uint8_t *base)
{
	return (struct gba_net_shm *)(base + GBA_EMU_SW_OFFSET);
}

/*
 * gba_net_local_name - the host image name for switch @host:@port and the
 * calling user, "/gba-net-<uid>-<16 hex digits>", into @buf (@len bytes).
 * The agent's lock and the users' lock are the same name with ".agent"
 * and ".users" appended.
 */
void gba_net_local_name(const char *host, int port, char *buf, size_t len);

/* Agent binary: $GBA_AGENT if set, else the installed one. */
const char *gba_net_agent_path(void);

#endif /* GBA_NET_H */
