/*
 * A flawed variant of the delivery turn, kept as a counterexample the checker must reject: it
 * proves that the checker finds its two defects. .ci/spin-check FAILS if spin stops finding them.
 *
 * The flawed protocol: the turn word is 0 free, 1 held, 2 held and asked to look. A send takes
 * a free turn and delivers; a send that finds it taken appends its event to the queue and
 * returns at once; the holder drains everyone's queue before giving the turn up. dispose()
 * drops the queue.
 *
 * Scenarios:
 *   LOST      defect 1: thread 1 delivers a value while thread 2 sends the terminal event (queued:
 *             the turn is taken), then disposes the subscription as the passthrough does — the
 *             queue is dropped with the accepted terminal event in it. Expected: the final
 *             assertion "an accepted terminal event was delivered" fails.
 *   TRAPPED   defect 0: thread 1 sends forever; thread 2 sends once. Thread 2 may take the turn
 *             and then drain thread 1's values for ever. Expected: with BOUND, the assertion that
 *             the queue holds at most QCAP - 1 events fails (it grows with the flood); without it,
 *             the claim `<> returned` has an acceptance cycle under weak fairness (thread 2 never
 *             returns).
 */

#define QCAP 4
#define TERM 9

byte turn;            /* 0 free, 1 held, 2 held and asked to look */
chan queue = [QCAP] of { byte };
bool terminated, disposed, alive = 1, terminalDelivered, terminalAccepted;
byte inCallback;
bool returned;
byte finished;

inline callback(e) {
  inCallback++;
  assert(inCallback == 1);
  if :: e == TERM -> terminalDelivered = 1 :: else -> skip fi;
  inCallback--
}

inline deliver(e) {
  if
  :: alive -> callback(e); if :: e == TERM -> alive = 0 :: else -> skip fi
  :: else -> skip
  fi
}

/* drain: the holder delivers queued events (everyone's), then gives the turn up. */
inline drain() {
  do
  :: atomic { nempty(queue) -> turn = 1; queue?e } ; deliver(e)
  :: atomic { empty(queue) -> if :: disposed -> alive = 0 :: else -> skip fi; turn = 0 }; break
  od
}

inline finishTurn() {
  if
  :: atomic { !disposed && turn == 1 -> turn = 0 }
  :: else -> drain()
  fi
}

/* enqueue: append for the holder; if the turn came free meanwhile, take it and drain. */
inline enqueue(ev) {
  atomic {
#ifdef BOUND
    assert(len(queue) < QCAP - 1);
#endif
    queue!ev;
    if
    :: turn == 0 -> turn = 1; took = 1
    :: else -> turn = 2; took = 0
    fi }
  if :: took -> drain() :: else -> skip fi
}

inline sendNext(ev) {
  if
  :: terminated -> skip
  :: else ->
       if
       :: atomic { turn == 0 -> turn = 1 }; deliver(ev); finishTurn()
       :: atomic { turn != 0 -> skip }; enqueue(ev)
       fi
  fi
}

inline sendCompleted() {
  atomic { accepted = !terminated; terminated = 1; if :: accepted -> terminalAccepted = 1 :: else -> skip fi };
  if
  :: accepted ->
       if
       :: atomic { turn == 0 -> turn = 1 }; deliver(TERM); finishTurn()
       :: atomic { turn != 0 -> skip }; enqueue(TERM)
       fi
  :: else -> skip
  fi
}

/* dispose: drops the queue (the accepted terminal event with it), then takes or pokes the turn. */
inline dispose() {
  atomic { disposed = 1; terminated = 1 };
  atomic { do :: nempty(queue) -> queue?e :: empty(queue) -> break od };
  if
  :: atomic { turn == 0 -> turn = 1 }; finishTurn()
  :: atomic { turn != 0 -> turn = 2 }
  fi
}

#ifdef LOST
proctype Sender1() {
  byte e; bool took, accepted;
  sendNext(1);
  atomic { finished++ }
}
proctype Sender2() {
  byte e; bool took, accepted;
  sendCompleted(); dispose();            /* the passthrough: forward, then dispose */
  atomic { finished++ }
}
init {
  atomic { run Sender1(); run Sender2() }
  finished == 2;
  assert(!terminalAccepted || terminalDelivered)   /* fails: defect 1 */
}
#endif

#ifdef TRAPPED
proctype Flooder() {
  byte e; bool took, accepted;
  do :: sendNext(1) od
}
proctype Single() {
  byte e; bool took, accepted;
  sendNext(2);
  returned = 1
}
init {
  atomic { run Flooder(); run Single() }
}
ltl singleSendReturns { <> returned }    /* fails: defect 0 */
#endif
