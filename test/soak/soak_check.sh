#!/bin/sh
# The short soak of make check (about 55 s): soak.sh with 20 s of
# barriers on 8 processes and 15 s of mixed traffic on 4 with the
# progress thread on and off, sampled every 2 s after 2 s (3 samples for
# the barriers) of warm-up.
SOAK_BARRIERS=0 SOAK_BARRIER_SECONDS=20 SOAK_BARRIER_INTERVAL=2 \
	SOAK_SECONDS=15 SOAK_INTERVAL=2 SOAK_WARMUP=2 \
	exec timeout -k 10 240 "$(dirname "$0")/soak.sh"
