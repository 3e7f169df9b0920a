/*
 * The delivery turn (Core/TurnMachine.swift, Core/DeliveryTurn.swift), as spin checks it.
 *
 * One or two owners (a Subscriber or a subject's storage). Each has a turn word (`holder`: 0 free,
 * else a thread id; `look`: the flag that sends the holder through the lock), a FIFO queue of
 * entries (event, owner thread or 0 = ownerless) guarded by the owner's lock, and the global
 * wait-for graph `waitsFor[thread]`. A lock-protected section is one `atomic` step, and so is each
 * compare-and-swap of the word; user callbacks run outside both. Transition names are the Swift
 * ones: takeFree, releaseUnasked, arrive (queueReentrant | wait | queueCycle), look (deliver |
 * handOff | released), and Subscriber's acceptTerminal / dispose.
 *
 * Scenarios (-D at `spin -a` time, see .ci/spin-check):
 *   SUBSCRIBER  two threads send values to one Subscriber; one of them sends the terminal event
 *               and then disposes (the passthrough's forward-then-dispose); one callback sends a
 *               value re-entrantly and another the terminal event re-entrantly, then disposes.
 *   JOIN        one thread sends values to a ReplaySubject while another subscribes: the joiner
 *               gets its replay and then every later value, with no gap and no duplicate.
 *   CYCLE       two owners whose callbacks send to each other, driven by two threads at once.
 *   FLOOD       a thread sends forever while another sends once: the single send returns
 *               (checked as LTL `<> returned` with weak fairness: defect 0 of the old turn).
 *   FORWARDER   an operator's SerialForwarder: senders enqueue (under the operator's lock) and
 *               drain later; one sender's event may be delivered for it before it drains. Then
 *               each sender sends to a Subscriber that the other one holds: every send returns
 *               only once its event was delivered (no stale wake is left for the next wait).
 *               With TWICE, the first sender enqueues a second event before it drains: its run
 *               goes on (owned) if its first entry is still last in the queue, else, once the
 *               holder took that entry, the second is ownerless (one owed wake, not two).
 *               SECOND_OWNED puts back the defect of owning that second entry too: a stale
 *               wake, kept as a counterexample the checker must find.
 *   RELAY       deliver(on:) with a buffer of one value and the `.wait` policy: thread 1 sends
 *               values into a subject whose callback feeds the relay (waiting for room), while
 *               the drain, thread 2, delivers them and sends each one back into that subject.
 *               The relay is "owner" 1 of the wait-for graph, held by the drain while it runs, so
 *               neither side waits for the other in a cycle; every value arrives exactly once.
 *   RELAYS      two deliver(on:) relays of one value each, on two serial schedulers A and B (one
 *               thread each): an action on A sends into the relay on B, whose drain delivers
 *               into the relay on A, whose drain is scheduled on A behind that very action. A
 *               scheduled drain that has not started is held, in the wait-for graph, by the
 *               thread occupying its scheduler (QueueOccupancy), so the cycle is seen and one
 *               value enters beyond the bound instead of both threads waiting forever.
 *               NO_OCCUPANT drops that rule (a pending drain held by nobody): it must deadlock.
 * Properties: assertions (no lost or doubled event, delivery in entry order, which includes
 * per-sender FIFO, callbacks of one owner never overlap, the terminal event exactly once and
 * last, queue bounded by QCAP), no invalid end state (no deadlock), and for FLOOD the liveness
 * claim.
 */

#define NT 4          /* threads 1..NT-1 (0 is unused: it means "free" / "ownerless") */
#define NO 2          /* owners */
#define QCAP 4        /* an assertion fails before a queue would hold more */
#define NONE 0
#define TERM 15       /* the terminal event */

byte holder[NO];      /* 0 free, else the holder's thread */
bool look[NO];
chan queue[NO] = [QCAP] of { byte, byte };   /* event, waiting thread (0 = ownerless) */
byte waitsFor[NT];    /* owner + 1, or 0 */
bool handed[NT];      /* the waiter's semaphore: handed the turn */
bool done[NT];        /* the waiter's semaphore: its entry was delivered for it (combine) */
bool expects[NT];     /* TurnWaiter.expectsWake: an owned entry was queued and not yet waited for */
#ifndef BUDGET
#define BUDGET 1      /* TurnMachine.combiningBudget (16 in Swift; 0 and 1 are the cases that differ) */
#endif
byte inCallback[NO];  /* callbacks running on the owner now: at most 1 */

/* Subscriber state (owner 0 in SUBSCRIBER) */
byte status;          /* bit 1: terminal accepted; bit 2: disposed */
bool alive = 1;       /* the closures; released by the terminal event or by disposal */
bool terminalDelivered;
byte entries;         /* entry counter: the order events enter the turn */
byte entryOf[16];     /* event -> its entry number (0 = never entered) */
byte lastDelivered;   /* entry number of the last delivery, on owner 0 */
byte deliveredCount[16];
byte finished;        /* threads done */

/* JOIN: a ReplaySubject with one early subscriber and one joiner */
byte history[4]; byte historyCount;
bool joined; byte joinerGot[8]; byte joinerCount;
bool returned;        /* FLOOD: the single send returned */

#define holderIs(o, t) (holder[o] == t)
#define JOINWORK 9    /* JOIN: the subscribe of the joiner (its replay) */
byte replayLength;        /* JOIN: history length when the subscribe entered */

#ifdef SUBSCRIBER
#define SUBSCRIBER_OWNER 1
#else
#define SUBSCRIBER_OWNER 0
#endif

/* Locals of the inlines, declared once per proctype (Promela hoists inline declarations). */
#define LOCALS byte result, cyc, x, steps, next, le, lw, old, e2, w2, n, i, combined, lo; bool accepted, took, last

/* Records that event e enters owner o's turn now (under the lock or with the take). */
inline enter(o, e) {
  if
  :: o == 0 && e != NONE -> entries++; entryOf[e] = entries
  :: else -> skip
  fi;
#ifdef JOIN
  /* a subject records a value, or snapshots a subscriber's replay, when the event enters */
  if :: e == JOINWORK -> replayLength = historyCount :: else -> history[historyCount] = e; historyCount++ fi
#endif
  skip
}

/* owner = the thread owning the last entry of owner o's queue (NONE when empty or ownerless);
   rotates the queue once, leaving it as it was. Inside an atomic step. */
inline lastOwnerOf(o, owner) {
  owner = NONE; n = len(queue[o]);
  do
  :: n > 0 -> queue[o]?e2,w2; queue[o]!e2,w2; owner = w2; n--
  :: n == 0 -> break
  od
}

/* owns = TurnMachine.hasEntries(ownedBy: t): whether thread t owns an entry of owner o's queue. */
inline ownsEntries(o, t, owns) {
  owns = 0; n = len(queue[o]);
  do
  :: n > 0 -> queue[o]?e2,w2; queue[o]!e2,w2; if :: w2 == t -> owns = 1 :: else -> skip fi; n--
  :: n == 0 -> break
  od
}

/* cycle = whether thread t waiting for a turn held by h would close a cycle in the wait-for graph. */
inline closesCycle(t, h, cycle) {
  x = h; steps = 0;
  cycle = 0;
  do
  :: x == t -> cycle = 1; break
  :: x != t && (waitsFor[x] == 0 || steps > NT) -> break
  :: x != t && waitsFor[x] != 0 && steps <= NT ->
       next = holder[waitsFor[x] - 1];
       if
       :: next == 0 || next == x -> break   /* free, or handed the turn and not yet awake: it runs */
       :: else -> x = next; steps++
       fi
  od
}

/* The user's callback for event e on owner o, run by the holder t (outside any lock). */
inline callback(o, e, t) {
  inCallback[o]++;
  assert(inCallback[o] == 1);                     /* callbacks of one owner never overlap */
  if
  :: SUBSCRIBER_OWNER && o == 0 ->
       assert(!terminalDelivered);                 /* nothing after the terminal event */
       assert(entryOf[e] > lastDelivered);         /* delivered in entry order, each once */
       lastDelivered = entryOf[e];
       deliveredCount[e]++;
       assert(deliveredCount[e] == 1);
       if :: e == TERM -> terminalDelivered = 1 :: else -> skip fi
  :: else ->
#ifndef FLOOD
       deliveredCount[e]++; assert(deliveredCount[e] == 1)
#else
       skip
#endif
  fi;
  inCallback[o]--
}

/* What the subscriber's callbacks send to their own subscriber (queueReentrant: t holds the turn). */
inline reentrantSends(e, t) {
#ifdef SUBSCRIBER
  if
  :: e == 1 && status == 0 ->
       atomic { assert(holderIs(0, t) && len(queue[0]) < QCAP); look[0] = 1; queue[0]!5,NONE; enter(0, 5) }
#ifdef REENTRANT_TERMINAL
  :: e == 3 ->
       atomic { accepted = (status == 0); if :: accepted -> status = 1 :: else -> skip fi };
       if
       :: accepted -> atomic { assert(holderIs(0, t) && len(queue[0]) < QCAP); look[0] = 1; queue[0]!TERM,NONE; enter(0, TERM) }
       :: else -> skip
       fi;
       /* the passthrough's dispose, from inside the callback: this thread holds the turn, so the
          fence never takes it (and a terminal event was accepted, so nothing may be dropped) */
       disposeStart(t);
       assert(!took)
#endif
  :: else -> skip
  fi
#else
  skip
#endif
}

/* RELAY: the subject's subscriber feeds deliver(on:)'s relay, waiting for room unless that would
   close a cycle (then the value enters beyond the bound). */
#define RBOUND 1
byte rcount, rvalues[4], rhead;   /* the relay's buffer (values in order) */
bool rwaiting[NT];
inline relayEnqueue(e, t) {
#ifdef RELAY
  do
  :: atomic {
       if
       :: rcount < RBOUND -> rvalues[(rhead + rcount) % 4] = e; rcount++; result = 0
       :: else ->
            closesCycle(t, holder[1], cyc);
            if
            :: cyc -> assert(rcount < 3); rvalues[(rhead + rcount) % 4] = e; rcount++; result = 0   /* overflow */
            :: !cyc -> waitsFor[t] = 2; rwaiting[t] = 1; result = 2
            fi
       fi }
     if
     :: result == 0 -> break
     :: result == 2 -> atomic { handed[t] -> handed[t] = 0; waitsFor[t] = 0 }   /* room: try again */
     fi
  od
#else
  skip
#endif
}

/* Subscriber.deliver: the closures may have been released. */
inline deliver(o, e, t) {
#ifdef JOIN
  perform(e)
#else
  if
  :: o == 0 && SUBSCRIBER_OWNER ->
       if
       :: alive && (e == TERM || status != 2) ->
            callback(o, e, t);
            reentrantSends(e, t);
            if :: e == TERM -> alive = 0 :: else -> skip fi
       :: else -> skip
       fi
  :: else -> callback(o, e, t); if :: o == 0 -> relayEnqueue(e, t) :: else -> skip fi
  fi
#endif
}

/* The holder's release: releaseUnasked, else look until released or handed off. Entries are
   taken in order: ownerless ones and the holder's own are delivered by it; a waiting thread's is
   delivered for it (combine) while the holder has delivered fewer than BUDGET for others in this
   turn, else the turn is handed to that thread, whose entry stays at the head (handOff). */
inline finishTurn(o, t) {
  combined = 0;
  do
  :: atomic { !look[o] -> holder[o] = 0 }; break            /* releaseUnasked */
  :: atomic { look[o] ->                                     /* look, under the lock */
       lw = NONE;
       if
       :: SUBSCRIBER_OWNER && o == 0 && status == 2 && alive ->
            alive = 0; le = NONE                             /* tidy: disposed, release the closures */
       :: else ->
            if
            :: empty(queue[o]) -> holder[o] = 0; look[o] = 0; le = NONE
            :: nempty(queue[o]) ->
                 queue[o]?<le,lw>;                           /* peek at the head */
                 if
                 :: lw == NONE || lw == t -> queue[o]?le,lw; look[o] = nempty(queue[o]); lw = NONE   /* deliver */
                 :: lw != NONE && lw != t && combined < BUDGET ->
                      queue[o]?le,lw; look[o] = nempty(queue[o]);                              /* combine */
                      ownsEntries(o, lw, last); last = !last                 /* wake it after its last */
                 :: lw != NONE && lw != t && combined >= BUDGET ->
                      holder[o] = lw; look[o] = 1; handed[lw] = 1; le = NONE; lw = NONE        /* handOff */
                 fi
            fi
       fi }
     if
     :: le != NONE && lw == NONE -> deliver(o, le, t); le = NONE      /* then look again */
     :: le != NONE && lw != NONE ->
          deliver(o, le, t); le = NONE; combined++;
          if :: last -> done[lw] = 1 :: else -> skip fi; lw = NONE
     :: le == NONE && holder[o] != t -> break                /* released or handed off */
     :: le == NONE && holder[o] == t -> skip                 /* tidied: look again */
     fi
  od
}

/* A send (or subscribe) of event e to owner o by thread t that is not the holder. */
inline send(o, e, t) {
  if
  :: atomic { holder[o] == 0 -> holder[o] = t; enter(o, e) }; result = 1     /* takeFree */
  :: atomic { holder[o] != 0 ->                                               /* arrive */
       if
       :: holder[o] == 0 -> holder[o] = t; enter(o, e); result = 1           /* the fence took it */
       :: holder[o] != 0 && holderIs(o, t) ->                                /* queueReentrant */
            assert(len(queue[o]) < QCAP); look[o] = 1; queue[o]!e,NONE; enter(o, e); result = 0
       :: holder[o] != 0 && !holderIs(o, t) ->
            look[o] = 1;
            assert(len(queue[o]) < QCAP);
            closesCycle(t, holder[o], cyc);
            if
            :: cyc -> queue[o]!e,NONE; enter(o, e); result = 0                /* queueCycle */
            :: !cyc -> waitsFor[t] = o + 1; queue[o]!e,t; enter(o, e); result = 2   /* wait */
            fi
       fi }
  fi;
  if
  :: result == 1 -> deliver(o, e, t); finishTurn(o, t)
  :: result == 2 ->
       if
       :: atomic { done[t] -> done[t] = 0; waitsFor[t] = 0 };         /* delivered for it */
#ifdef FORWARDER
          assert(deliveredCount[e] == 1)                              /* returns once delivered */
#else
          skip
#endif
       :: atomic { handed[t] -> handed[t] = 0; waitsFor[t] = 0 };     /* handed the turn: its */
          assert(holder[o] == t && look[o]);                          /* entry heads the queue */
          finishTurn(o, t)
       fi
  :: result == 0 -> skip
  fi
}

/* ---------------------------------------------------------------- SUBSCRIBER */
#ifdef SUBSCRIBER

/* Subscriber.sendNext: ignored once terminated or disposed. */
inline sendNext(e, t) {
  if :: status != 0 -> skip :: else -> send(0, e, t) fi
}

/* Subscriber.sendCompleted: acceptTerminal, then send. */
inline sendCompleted(t) {
  atomic { accepted = (status == 0); if :: accepted -> status = 1 :: else -> skip fi };
  if :: accepted -> send(0, TERM, t) :: else -> skip fi
}

/* Subscriber.dispose, the locked part: a no-op once a terminal event was accepted; else drop the
   ownerless entries (keeping the waiters') and fence the turn (took: this thread now holds it). */
inline disposeStart(t) {
  took = 0;
  atomic { old = status; status = status | 2 };
  if
  :: old == 0 ->
       atomic {
         n = len(queue[0]);
         do                                   /* dropOwnerless: keep the waiters' entries */
         :: n > 0 -> queue[0]?e2,w2; if :: w2 != NONE -> queue[0]!e2,w2 :: else -> skip fi; n--
         :: n == 0 -> break
         od;
         if
         :: holder[0] == 0 -> holder[0] = t; look[0] = 1; took = 1    /* fence took the free turn */
         :: else -> look[0] = 1                                       /* the holder tidies */
         fi }
  :: else -> skip
  fi
}

/* Subscriber.dispose: then, if it took the turn, tidy and release like any holder. */
inline dispose(t) {
  disposeStart(t);
  if :: took -> finishTurn(0, t) :: else -> skip fi
}

/* Thread 1: values 1, 2 (value 1's callback sends value 5 re-entrantly), then the terminal event
   and the passthrough's dispose. Thread 2: values 3, 4. With REENTRANT_TERMINAL, thread 1 sends no
   terminal event; instead value 3's callback sends it re-entrantly and then disposes, as a
   passthrough forwarding from inside a callback does: the queued terminal event must survive. */
proctype Sender1() {
  LOCALS;
  sendNext(1, 1); sendNext(2, 1);
#ifndef REENTRANT_TERMINAL
  sendCompleted(1); dispose(1);
#endif
  atomic { finished++ }
}
proctype Sender2() {
  LOCALS;
  sendNext(3, 2); sendNext(4, 2);
  atomic { finished++ }
}
#ifdef THREE
/* A third sender (-DTHREE): value 6 — more interleavings of waiting, combining and hand-off. */
proctype Sender3() {
  LOCALS;
  sendNext(6, 3);
  atomic { finished++ }
}
#define SENDERS 3
#else
#define SENDERS 2
#endif
init {
  atomic {
    run Sender1(); run Sender2();
#ifdef THREE
    run Sender3()
#endif
  }
  finished == SENDERS;
  /* Completeness: every event that entered before the terminal event was delivered, once. */
  assert(alive == 0 && holder[0] == 0 && empty(queue[0]));
  assert(entryOf[TERM] == 0 || terminalDelivered);
  byte v = 1;
  do
  :: v <= 6 ->
       assert(deliveredCount[v] == (entryOf[v] != 0 && (entryOf[TERM] == 0 || entryOf[v] < entryOf[TERM]) -> 1 : 0));
       v++
  :: v > 6 -> break
  od
}
#endif

/* ---------------------------------------------------------------- CYCLE */
#ifdef CYCLE
/* Owner 0's callback for event e sends e + 4 to owner 1, and owner 1's sends e + 4 to owner 0,
   once each (events 1, 2 start; 5, 6 are the forwarded ones). */
inline cycleSend(o, e, t) {
  send(o, e, t)
}
proctype A() {
  LOCALS;
  /* A sends 1 to owner 0; delivering it, A (the holder) sends 5 to owner 1. */
  atomic { holder[0] == 0 -> holder[0] = 1 };
  callback(0, 1, 1);
  send(1, 5, 1);                       /* inside owner 0's callback: A holds owner 0 */
  finishTurn(0, 1);
  atomic { finished++ }
}
proctype B() {
  LOCALS;
  atomic { holder[1] == 0 -> holder[1] = 2 };
  callback(1, 2, 2);
  send(0, 6, 2);                       /* inside owner 1's callback: B holds owner 1 */
  finishTurn(1, 2);
  atomic { finished++ }
}
init {
  atomic { run A(); run B() }
  finished == 2;
  assert(deliveredCount[1] == 1 && deliveredCount[2] == 1 && deliveredCount[5] == 1 && deliveredCount[6] == 1);
  assert(holder[0] == 0 && holder[1] == 0 && empty(queue[0]) && empty(queue[1]))
}
#endif

/* ---------------------------------------------------------------- JOIN */
#ifdef JOIN
/* Owner 0 is a ReplaySubject with one subscriber; thread 1 sends values 1..3, thread 2 subscribes
   (event JOINWORK). A value enters the history, and the subscribe snapshots it, when the event
   enters the turn (`enter`); the subscribe's work — join, then replay — runs when delivered,
   by the joiner or by a holder combining it. The joiner must get every value exactly once, in
   order: the replay, then live values. */
inline perform(e) {
  if
  :: e == JOINWORK ->
       i = 0;
       joined = 1;
       do :: i < replayLength -> joinerGot[joinerCount] = history[i]; joinerCount++; i++ :: else -> break od
  :: else ->
       callback(0, e, 0);
       if :: joined -> joinerGot[joinerCount] = e; joinerCount++ :: else -> skip fi
  fi
}
proctype Sender() {
  LOCALS;
  send(0, 1, 1); send(0, 2, 1); send(0, 3, 1);
  atomic { finished++ }
}
proctype Joiner() {
  LOCALS;
  send(0, JOINWORK, 2);
  atomic { finished++ }
}
init {
  atomic { run Sender(); run Joiner() }
  finished == 2;
  assert(joinerCount == 3 && joinerGot[0] == 1 && joinerGot[1] == 2 && joinerGot[2] == 3)
}
#endif

/* ---------------------------------------------------------------- FLOOD */
#ifdef FLOOD
/* Thread 1 sends to owner 0 forever; thread 2 sends once (or subscribes) and must return. */
proctype Flooder() {
  LOCALS;
  do
  :: send(1, 1, 1)
  od
}
proctype Single() {
  LOCALS;
  send(1, 2, 2);
  returned = 1
}
init {
  atomic { run Flooder(); run Single() }
}
ltl singleSendReturns { <> returned }
#endif

/* ---------------------------------------------------------------- RELAY */
#ifdef RELAY
proctype Producer() {
  LOCALS;
  send(0, 1, 1); send(0, 2, 1);
  atomic { finished++ }
}
/* The drain: takes what is buffered (holding the relay meanwhile, and waking the waiting sender),
   delivers it downstream, and the downstream callback sends original values back upstream. */
proctype Drain() {
  LOCALS;
  byte batch, got, v, bv[4], k;
  do
  :: got == 4 -> break
  :: atomic { got < 4 && rcount > 0 ->            /* take everything buffered, under the lock */
       holder[1] = 2; batch = rcount; k = 0;
       do :: k < batch -> bv[k] = rvalues[(rhead + k) % 4]; k++ :: else -> break od;
       rhead = (rhead + batch) % 4; rcount = 0;
       if :: rwaiting[1] -> rwaiting[1] = 0; handed[1] = 1 :: else -> skip fi }   /* room again */
     k = 0;
     do
     :: k < batch ->
          v = bv[k]; k++; got++;
          deliveredCount[v + 8]++; assert(deliveredCount[v + 8] == 1);   /* downstream: once each */
          if :: v < 5 -> send(0, v + 4, 2) :: else -> skip fi
     :: k == batch -> break
     od;
     holder[1] = 0
  od
}
init {
  atomic { run Producer(); run Drain() }
}
#endif

/* ---------------------------------------------------------------- FORWARDER */
#ifdef FORWARDER
/* SerialForwarder.enqueue, under the operator's lock: the entry joins the queue, carrying its
   work, owned by the sender unless it takes the free turn (holding) or the holder delivers it. */
inline fwdEnqueue(o, e, t) {
  atomic {
    assert(len(queue[o]) < QCAP);
    if
    :: holder[o] == 0 -> holder[o] = t; look[o] = 1; queue[o]!e,NONE          /* takeFree: holding */
    :: holder[o] == t -> look[o] = 1; queue[o]!e,NONE                          /* queueReentrant */
    :: holder[o] != 0 && holder[o] != t ->
         look[o] = 1;
         lastOwnerOf(o, lo);
         if
         :: lo == t -> queue[o]!e,t                                            /* its run goes on */
#ifndef SECOND_OWNED
         :: lo != t && expects[t] -> queue[o]!e,NONE      /* its earlier entry was taken: one wake */
#else
         :: lo != t && expects[t] -> queue[o]!e,t         /* the bug fixed in 75f2e81's parent: a second owed wake */
#endif
         :: lo != t && !expects[t] ->
              closesCycle(t, holder[o], cyc);
              if
              :: cyc -> queue[o]!e,NONE                                        /* queueCycle */
              :: !cyc -> waitsFor[t] = o + 1; queue[o]!e,t; expects[t] = 1     /* wait */
              fi
         fi
    fi }
}
/* SerialForwarder.drain, after unlocking: an owned entry brings exactly one wake — take it even
   if the entry was delivered already; as the holder, look. */
inline fwdDrain(o, t) {
  if
  :: expects[t] ->
       expects[t] = 0;
       if
       :: atomic { done[t] -> done[t] = 0; waitsFor[t] = 0 }
       :: atomic { handed[t] -> handed[t] = 0; waitsFor[t] = 0 }; finishTurn(o, t)
       fi
  :: else -> skip
  fi;
  /* then, as in Swift's loop: a later entry may have taken the free turn (holding) */
  if :: holder[o] == t -> finishTurn(o, t) :: else -> skip fi
}
proctype F1() {
  LOCALS;
  fwdEnqueue(0, 1, 1);
#ifdef TWICE
  fwdEnqueue(0, 5, 1);       /* a second entry before draining (zip's value + completion) */
#endif
  fwdDrain(0, 1);
  send(1, 3, 1);
  atomic { finished++ }
}
proctype F2() {
  LOCALS;
  fwdEnqueue(0, 2, 2); fwdDrain(0, 2);
  send(1, 4, 2);
  atomic { finished++ }
}
init {
  atomic { run F1(); run F2() }
  finished == 2;
  assert(deliveredCount[1] == 1 && deliveredCount[2] == 1 && deliveredCount[3] == 1 && deliveredCount[4] == 1);
#ifdef TWICE
  assert(deliveredCount[5] == 1);
#endif
  assert(!done[1] && !done[2] && !handed[1] && !handed[2] && waitsFor[1] == 0 && waitsFor[2] == 0)
}
#endif

/* ---------------------------------------------------------------- RELAYS */
#ifdef RELAYS
#define PENDING 9     /* DeliveryRelay.pending: a drain scheduled, not started */
byte drainer[2];      /* relay r: 0 (no drain), PENDING, or the draining thread */
byte occupant[2];     /* scheduler r's running thread (QueueOccupancy), 0 when idle */
byte rcnt[2];         /* values in relay r's buffer (bound 1) */
byte rbuf[8];         /* relay r's values: rbuf[r*4 + k] */
byte rwaiter[2];      /* the thread waiting for room in relay r, or 0 */
byte rwaits[NT];      /* relay + 1 that thread t waits for, or 0 */
byte got;             /* values delivered by the last relay */
byte passed;          /* values relay 1 (on B) delivered into relay 0 (on A) */

/* DeliveryRelay.turnWord: the draining thread, or for a pending drain its scheduler's occupant. */
inline relayHolder(r, h) {
#ifdef NO_OCCUPANT
  if :: drainer[r] == PENDING -> h = 0 :: else -> h = drainer[r] fi
#else
  if :: drainer[r] == PENDING -> h = occupant[r] :: else -> h = drainer[r] fi
#endif
}

/* WaitGraph.startWaiting over relays: does thread t waiting for a relay held by h close a cycle? */
inline relayCycle(t, h, cycle) {
  x = h; steps = 0; cycle = 0;
  do
  :: x == t -> cycle = 1; break
  :: x != t && (x == 0 || rwaits[x] == 0 || steps > NT) -> break
  :: x != t && x != 0 && rwaits[x] != 0 && steps <= NT ->
       relayHolder(rwaits[x] - 1, next);
       if :: next == x -> break :: else -> x = next; steps++ fi
  od
}

/* DeliveryRelay.enqueue with .wait: room, or a cycle (then beyond the bound), else wait. */
inline relaysEnqueue(r, v, t) {
  do
  :: atomic {
       if
       :: rcnt[r] < 1 -> rbuf[r * 4 + rcnt[r]] = v; rcnt[r]++; result = 0
       :: else ->
            relayHolder(r, i); relayCycle(t, i, cyc);
            if
            :: cyc -> assert(rcnt[r] < 3); rbuf[r * 4 + rcnt[r]] = v; rcnt[r]++; result = 0
            :: !cyc -> rwaits[t] = r + 1; rwaiter[r] = t; result = 2
            fi
       fi;
       if :: result == 0 && drainer[r] == 0 -> drainer[r] = PENDING :: else -> skip fi }   /* scheduleIfIdle */
     if
     :: result == 0 -> break
     :: result == 2 -> atomic { handed[t] -> handed[t] = 0; rwaits[t] = 0 }               /* room: again */
     fi
  od
}

/* DeliveryRelay.drain, an action of scheduler r run by its thread t: take the batch (waking the
   waiting sender), deliver it, until the buffer is dry; drainer reset under the lock. */
inline relaysDrain(r, t) {
  byte batch, k, bv[3];
  atomic { occupant[r] = t; drainer[r] = t };
  do
  :: atomic { rcnt[r] > 0 ->
       batch = rcnt[r]; k = 0;
       do :: k < batch -> bv[k] = rbuf[r * 4 + k]; k++ :: else -> break od;
       rcnt[r] = 0;
       if :: rwaiter[r] != 0 -> handed[rwaiter[r]] = 1; rwaiter[r] = 0 :: else -> skip fi }
     k = 0;
     do
     :: k < batch ->
          if
          :: r == 1 -> passed++; relaysEnqueue(0, bv[k], t)
          :: r == 0 -> got++; deliveredCount[bv[k]]++; assert(deliveredCount[bv[k]] == 1)
          fi;
          k++
     :: k == batch -> break
     od
  :: atomic { rcnt[r] == 0 -> drainer[r] = 0 }; break
  od;
  occupant[r] = 0
}

/* Thread 1 runs scheduler A: an action sending 1..4 into the relay on B, then A's drains. */
proctype SchedulerA() {
  LOCALS;
  occupant[0] = 1;
  relaysEnqueue(1, 1, 1); relaysEnqueue(1, 2, 1); relaysEnqueue(1, 3, 1); relaysEnqueue(1, 4, 1);
  occupant[0] = 0;
  do
  :: got == 4 -> break
  :: drainer[0] == PENDING -> relaysDrain(0, 1)
  od;
  atomic { finished++ }
}
/* Thread 2 runs scheduler B: the drains of the relay on B. */
proctype SchedulerB() {
  LOCALS;
  do
  :: passed == 4 && drainer[1] == 0 -> break
  :: drainer[1] == PENDING -> relaysDrain(1, 2)
  od;
  atomic { finished++ }
}
init {
  atomic { run SchedulerA(); run SchedulerB() }
  finished == 2;
  assert(got == 4 && deliveredCount[1] == 1 && deliveredCount[2] == 1 && deliveredCount[3] == 1 && deliveredCount[4] == 1);
  assert(!handed[1] && !handed[2] && !done[1] && rwaits[1] == 0 && rwaits[2] == 0)
}
#endif
