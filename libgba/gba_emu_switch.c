/*
 * GBA core library: the software switch of the emulated device.
 *
 * There is no daemon: the switch logic runs in whichever process stores to
 * a register with side effects (CONTROL, ARRIVAL).  The arrival path is
 * lock-free; many processes may ring the same group concurrently.
 *
 * Epochs.  sw->epoch is the sequence number the switch is collecting.  An
 * arrival (m, s) is
 *   - dropped with NOT_ENABLED if the group is not enabled,
 *   - dropped with NOT_MEMBER if m is not in the (latched) MEMBER_MASK,
 *   - dropped with BAD_SEQ if s != epoch (when m's release flag reads
 *     s-1 the epoch is known to be s without reading it: see
 *     sw_flag_proves_epoch),
 *   - counted if the compare-exchange member[m].last: s-1 -> s succeeds, and
 *     ignored as a duplicate otherwise.
 * A counted arrival increments the counter (struct gba_emu_sw.count); the
 * arrival that brings it to MEMBER_COUNT is the completer and performs the
 * release.  The epoch registers are derived from this state when read
 * (gba_emu_sw_read): ARRIVAL_COUNT is the counter, RELEASE_SEQ is
 * epoch - 1, ARRIVED_MASK has the bits of the members whose last == epoch.
 * So an arrival stores to its member's own line and to the counter line,
 * and a release to the counter line and the flags: the least a switch of
 * shared memory can do.
 *
 * Why this is race-free:
 *   - The epoch cannot advance from s while a member m has not been
 *     counted in s (the count cannot reach MEMBER_COUNT).  So when the
 *     compare-exchange on member[m].last succeeds (m was not counted in s), the
 *     epoch is still s, and the increment that follows belongs to epoch
 *     s.  A stale or duplicated doorbell (m, s) that read the epoch before
 *     it advanced fails the compare-exchange (member[m].last == s
 *     already) and is ignored; it can never be counted in epoch s+1.
 *     (A switch that detected duplicates with ARRIVED_MASK alone would
 *     let that stale doorbell count in epoch s+1 and release it early.)
 *   - Every counted arrival's exchange (acq_rel) precedes its acq_rel
 *     increment of the counter; the completer's increment is the last in
 *     that read-modify-write chain, so every member's last == s happens
 *     before the completer advances the epoch.
 *   - The completer resets the counter, then advances the epoch
 *     (release, which is also RELEASE_SEQ = s), and only then stores the
 *     release flags (release).  A member sees its flag (acquire) before
 *     it can arrive for s+1, so its next arrival observes the new epoch
 *     and the reset counter.
 *   - A waiter that reads ARRIVED_MASK reads the epoch first (acquire):
 *     a member's bit reads clear after the release only together with
 *     RELEASE_SEQ = s; the dead-peer check relies on this to never report
 *     a member that was already released (gba_barrier.c).
 */
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include <gba/gba_fault.h>

#include "gba_emu.h"

/* Host pointer to the 64-bit register at @off of a group window. */
#define REG(regs, off) ((uint64_t *)((uint8_t *)(regs) + (off)))
#define REG32(regs, off) ((uint32_t *)((uint8_t *)(regs) + (off)))

static void sw_error(volatile uint64_t *regs, uint64_t info)
{
	/* info first, so that a reader seeing STATUS.ERROR (acquire) reads
	 * the info of this or a later error */
	__atomic_store_n(REG(regs, GBA_ERROR_INFO), info, __ATOMIC_RELAXED);
	__atomic_fetch_or(REG(regs, GBA_STATUS), GBA_STATUS_ERROR,
			  __ATOMIC_RELEASE);
}

void gba_emu_sw_report_error(struct gba_dev *dev, unsigned g, uint64_t info)
{
	if (g < GBA_MAX_GROUPS)
		sw_error(gba_group_regs(dev, g), info);
}

void gba_emu_sw_reset(struct gba_emu *emu, volatile uint64_t *regs,
		      struct gba_emu_sw *sw)
{
	unsigned i;

	atomic_store_explicit(&sw->ctrl, 0, memory_order_release);
	sw->member_count = 0;
	sw->mask_words = 0;
	for (i = 0; i < GBA_MASK_WORDS; i++)
		sw->member_mask[i] = 0;
	for (i = 0; i < GBA_MAX_MEMBERS; i++)
		atomic_store_explicit(&sw->member[i].last, 0,
				      memory_order_relaxed);
	/* the first barrier is 1; member[].last == epoch - 1 for everyone */
	atomic_store_explicit(&sw->count, 0, memory_order_relaxed);
	atomic_store_explicit(&sw->epoch, 1, memory_order_release);
	/* every register of the window reads 0 after RESET */
	for (i = 0; i < GBA_GROUP_WINDOW_END; i += 8)
		__atomic_store_n(REG(regs, i), 0, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/*
 * Latch the configuration registers when the group is enabled.  Returns 0
 * if the configuration is consistent (1 <= MEMBER_COUNT <= 708, MEMBER_MASK
 * has exactly MEMBER_COUNT bits, none beyond member 707), else -1: the
 * group then does not become READY.
 */
static int sw_latch(volatile uint64_t *regs, struct gba_emu_sw *sw)
{
	uint32_t n = __atomic_load_n(REG32(regs, GBA_MEMBER_COUNT),
				     __ATOMIC_RELAXED);
	unsigned w, bits = 0, words = 0;
	uint64_t mask[GBA_MASK_WORDS];

	for (w = 0; w < GBA_MASK_WORDS; w++) {
		mask[w] = __atomic_load_n(REG(regs, GBA_MEMBER_MASK(w)),
					  __ATOMIC_RELAXED);
		bits += __builtin_popcountll(mask[w]);
		if (mask[w])
			words = w + 1;
	}
	if (mask[GBA_MASK_WORDS - 1] >> (GBA_MAX_MEMBERS % 64))
		return -1;
	if (n < 1 || n > GBA_MAX_MEMBERS || bits != n)
		return -1;
	memcpy(sw->member_mask, mask, sizeof(mask));
	sw->member_count = n;
	sw->mask_words = words;
	return 0;
}

void gba_emu_sw_control(struct gba_dev *dev, unsigned g, uint64_t val)
{
	struct gba_emu *emu = gba_emu(dev);
	volatile uint64_t *regs = gba_group_regs(dev, g);
	struct gba_emu_sw *sw = &emu->sw[g];
	uint32_t ctrl, new_ctrl;
	uint64_t status;

	if (val & GBA_CTRL_RESET)
		gba_emu_sw_reset(emu, regs, sw);	/* RESET self-clears */
	val &= GBA_CTRL_ENABLE | GBA_CTRL_ARM;
	__atomic_store_n(REG(regs, GBA_CONTROL), val, __ATOMIC_RELAXED);

	ctrl = atomic_load_explicit(&sw->ctrl, memory_order_relaxed);
	if (!(val & GBA_CTRL_ENABLE)) {
		atomic_store_explicit(&sw->ctrl, 0, memory_order_release);
		__atomic_fetch_and(REG(regs, GBA_STATUS),
				   ~(GBA_STATUS_READY | GBA_STATUS_ACTIVE),
				   __ATOMIC_RELEASE);
		return;
	}
	/* configuration is latched on the 0 -> 1 transition of ENABLE */
	if (!(ctrl & GBA_EMU_SW_ENABLE) && sw_latch(regs, sw))
		return;
	new_ctrl = GBA_EMU_SW_ENABLE |
		   ((val & GBA_CTRL_ARM) ? GBA_EMU_SW_ARM : 0);
	atomic_store_explicit(&sw->ctrl, new_ctrl, memory_order_release);
	status = GBA_STATUS_READY |
		 ((val & GBA_CTRL_ARM) ? GBA_STATUS_ACTIVE : 0);
	__atomic_fetch_and(REG(regs, GBA_STATUS), ~GBA_STATUS_ACTIVE,
			   __ATOMIC_RELAXED);
	__atomic_fetch_or(REG(regs, GBA_STATUS), status, __ATOMIC_RELEASE);
}

/* All members arrived in epoch @seq: protocol step 3's release. */
static void sw_release(struct gba_emu *emu, volatile uint64_t *regs,
		       struct gba_emu_sw *sw, uint32_t seq)
{
	unsigned w, words = sw->mask_words;
	uint64_t iova, bits;
	uint64_t *flag;

	/* the switch state is in the image, which any process of the user
	 * can write: never index past the mask */
	if (words > GBA_MASK_WORDS)
		words = GBA_MASK_WORDS;
	/* ARRIVED_MASK clears with the epoch; ARRIVAL_COUNT here */
	atomic_store_explicit(&sw->count, 0, memory_order_relaxed);
	/* COMPLETE is sticky: avoid dirtying the STATUS line every time */
	if (!(__atomic_load_n(REG(regs, GBA_STATUS), __ATOMIC_RELAXED) &
	      GBA_STATUS_COMPLETE))
		__atomic_fetch_or(REG(regs, GBA_STATUS), GBA_STATUS_COMPLETE,
				  __ATOMIC_RELAXED);
	/* RELEASE_SEQ = seq; the epoch advances before any flag is written */
	atomic_store_explicit(&sw->epoch, seq + 1, memory_order_release);

	if (!(atomic_load_explicit(&sw->ctrl, memory_order_relaxed) &
	      GBA_EMU_SW_ARM))
		return;
	for (w = 0; w < words; w++) {
		for (bits = sw->member_mask[w]; bits; bits &= bits - 1) {
			unsigned m = w * 64 + __builtin_ctzll(bits);

			if (m >= GBA_MAX_MEMBERS)
				break;
			iova = __atomic_load_n(REG(regs, GBA_RELEASE_ADDR(m)),
					       __ATOMIC_RELAXED);
			/* the switch can only store into flag memory; a bad
			 * address is an IOMMU fault on hardware: skip it */
			if (iova < GBA_FLAG_OFFSET ||
			    iova >= GBA_FLAG_OFFSET + GBA_FLAG_AREA_SIZE ||
			    (iova & 7))
				continue;
			flag = (uint64_t *)(emu->base + iova);
			__atomic_store_n(flag, (uint64_t)seq, __ATOMIC_RELEASE);
		}
	}
}

/*
 * Does member @m's release flag prove that the epoch is @seq?  The flag
 * holds the last sequence released to @m (zeroed at setup, stored by the
 * completer after it advanced the epoch, with ARM set).  If it reads
 * seq - 1 (acquire), the release of seq - 1 advanced the epoch to seq,
 * and the epoch cannot pass seq before @m is counted in seq -- which the
 * compare-exchange on member[m].last decides.  So an arrival whose flag
 * reads seq - 1 and whose exchange succeeds belongs to epoch seq, without
 * reading the epoch line the completer just wrote.  The flag line is in
 * the arriving CPU's cache: the member has just polled it.
 */
static inline bool sw_flag_proves_epoch(struct gba_emu *emu,
					volatile uint64_t *regs, uint32_t m,
					uint32_t seq)
{
	uint64_t iova = __atomic_load_n(REG(regs, GBA_RELEASE_ADDR(m)),
					__ATOMIC_RELAXED);
	uint64_t flag;

	if (iova < GBA_FLAG_OFFSET ||
	    iova >= GBA_FLAG_OFFSET + GBA_FLAG_AREA_SIZE || (iova & 7))
		return false;
	flag = __atomic_load_n((uint64_t *)(emu->base + iova),
			       __ATOMIC_ACQUIRE);
	return (uint32_t)flag == seq - 1;
}

void gba_emu_sw_arrival(struct gba_dev *dev, unsigned g, uint64_t val)
{
	struct gba_emu *emu = gba_emu(dev);
	volatile uint64_t *regs = gba_group_regs(dev, g);
	struct gba_emu_sw *sw = &emu->sw[g];
	uint32_t m = GBA_ARRIVAL_MEMBER(val), seq = GBA_ARRIVAL_SEQ(val);
	uint32_t ctrl, epoch, expect, count;
	bool known;

	ctrl = atomic_load_explicit(&sw->ctrl, memory_order_acquire);
	if (!(ctrl & GBA_EMU_SW_ENABLE)) {
		sw_error(regs, GBA_ERROR_INFO_VALUE(GBA_ERR_NOT_ENABLED, m,
						    seq));
		return;
	}
	if (m >= GBA_MAX_MEMBERS ||
	    !((sw->member_mask[m / 64] >> (m % 64)) & 1)) {
		sw_error(regs, GBA_ERROR_INFO_VALUE(GBA_ERR_NOT_MEMBER, m,
						    seq));
		return;
	}
	known = (ctrl & GBA_EMU_SW_ARM) && sw_flag_proves_epoch(emu, regs, m,
								 seq);
	if (!known) {
		epoch = atomic_load_explicit(&sw->epoch, memory_order_acquire);
		if (seq != epoch) {
			sw_error(regs,
				 GBA_ERROR_INFO_VALUE(GBA_ERR_BAD_SEQ, m, seq));
			return;
		}
	}
	expect = seq - 1;
	if (!atomic_compare_exchange_strong_explicit(
		    &sw->member[m].last, &expect, seq, memory_order_acq_rel,
		    memory_order_acquire)) {
		/* duplicate, unless the epoch was not checked and is not seq */
		if (known &&
		    seq != atomic_load_explicit(&sw->epoch,
						memory_order_acquire))
			sw_error(regs,
				 GBA_ERROR_INFO_VALUE(GBA_ERR_BAD_SEQ, m, seq));
		return;
	}

	gba_fault(GBA_FAULT_BARRIER);
	count = atomic_fetch_add_explicit(&sw->count, 1,
					  memory_order_acq_rel) + 1;
	if (count == sw->member_count)
		sw_release(emu, regs, sw, seq);
}

uint64_t gba_emu_sw_read(struct gba_dev *dev, unsigned g, uint64_t r)
{
	struct gba_emu_sw *sw = &gba_emu(dev)->sw[g];
	uint32_t epoch = atomic_load_explicit(&sw->epoch, memory_order_acquire);
	uint64_t word = 0, bits;
	unsigned w;

	if (r == GBA_ARRIVAL_COUNT)
		return atomic_load_explicit(&sw->count, memory_order_acquire);
	if (r == GBA_RELEASE_SEQ)
		return (uint32_t)(epoch - 1);
	/* ARRIVED_MASK(w) */
	w = (r - GBA_ARRIVED_MASK(0)) / 8;
	for (bits = sw->member_mask[w]; bits; bits &= bits - 1) {
		unsigned b = __builtin_ctzll(bits);

		/* a mask bit beyond the last member (a corrupt image) */
		if (w * 64 + b >= GBA_MAX_MEMBERS)
			break;
		if (atomic_load_explicit(&sw->member[w * 64 + b].last,
					 memory_order_acquire) == epoch)
			word |= 1ULL << b;
	}
	return word;
}
