/*
 * eventbus.pml: the broker's append/commit/confirm and a plugin's
 * consume/publish/ack/snapshot/resume, checked with spin under every
 * interleaving of crashes (docs/reliability.md).
 *
 * One model, two configurations:
 *   broker   (default)  a publisher of NEV events to `in`, the broker, a consumer of `in`;
 *   pipeline (-DPIPELINE) the same plus a plugin `in` -> `out` and a consumer of `out`.
 * Mutants (-DMUTANT_...) each break one rule the code keeps; spin must find a trail.
 *
 * What it follows in the code:
 *   BrokerCore+Publish.swift  a PUB is looked up in the dedup window, its new events
 *                             appended (write(2) at once: the page cache) and its OK
 *                             queued in `unconfirmed`, a repeat's OK too;
 *   BrokerCore+Commit.swift   a group is the run of `unconfirmed` after the groups in
 *                             flight and the head at prepareSync; up to two fsyncs are in
 *                             flight and may complete in either order; groups are released
 *                             in the order taken: the OKs are sent and `visibleSeq` rises
 *                             to the group's head; nothing above is delivered;
 *   SegmentLog / operations.md "What happens on start": on open the torn tail is cut and
 *                             every segment fsynced; BrokerCore rebuilds the dedup window
 *                             from the log;
 *   PluginRunner.swift        consume after appliedSeq, publish with the id derived from
 *                             the input SEQ (`<plugin>:<seq>:<n>`), ACK once confirmed,
 *                             commit state+SEQ only with no output unconfirmed, resend
 *                             the unconfirmed output after a reconnect, restart from the
 *                             committed snapshot (FileSnapshotStore: old or new, atomic).
 */

#ifndef NEV
#define NEV 2          /* events the publisher publishes to `in` */
#endif
#ifndef BCRASH
#define BCRASH 1       /* broker crashes (process crash or power loss) */
#endif
#ifndef PCRASH
#define PCRASH 1       /* plugin crashes */
#endif
#ifndef RETRY
#define RETRY 1        /* publisher confirm timeouts: resend while the first may still be in flight */
#endif
#define MAXLOG 12      /* room for every record, duplicates of the mutants included */

#define IN  1
#define OUT 2
#define PUBLISHER 0
#define PLUGIN    1

/* ---- the broker's state ---- */
byte lstage[MAXLOG + 1];   /* the log: record SEQ s is (lstage[s], lkey[s]), s in 1..head */
byte lkey[MAXLOG + 1];
byte lsrc[MAXLOG + 1];     /* ghost: the input SEQ an `out` record derives from */
byte head;                 /* last SEQ appended (written to the file: in the page cache) */
byte durable;              /* last SEQ an fsync covered */
byte visible;              /* last SEQ consumers may be fed (visibleSeq) */
byte nsync;                /* fsyncs in flight (inFlight.count), at most 2 */
byte sync_head[2];         /* each one's ticket head, in the order taken */
byte sync_conf[2];         /* how many queued OKs each group covers */
bool sync_done[2];         /* whether each one's fsync has completed */
byte dedup_floor;          /* the dedup window holds the identities of SEQs above this */
byte epoch;                /* the broker's incarnation: connections break when it changes */

chan req = [4] of { byte, byte, byte, byte }; /* PUB in flight: client, stage, key, ghost source */
chan unconf = [6] of { byte, byte, byte };  /* OKs held back: client, key, SEQ */
chan reply[2] = [6] of { byte, byte };      /* OKs sent: key, SEQ */

/* ---- the plugin's state ---- */
#define P_IDLE 0
#define P_PUB  1
#define P_WAIT 2
#define P_DONE 3
byte pc;                   /* where the plugin is */
byte applied;              /* appliedSeq: the plugin's cursor on the log */
byte st;                   /* its state: how many `in` events it applied */
byte snap_seq, snap_st;    /* the committed snapshot */
byte okey;                 /* the identity of the output in flight */
byte pep;                  /* the broker incarnation its PUB went to */
byte pinc;                 /* the plugin's incarnation (for the random-id mutant) */

/* ---- crashes ---- */
byte bcrashes, pcrashes;

/* ---- ghosts: what the properties read ---- */
bool confirmed_in[NEV + 1];  /* the publisher got an OK for event e */
byte cnt_in[NEV + 1];        /* records of `in` with key e in the log */
byte cnt_out[MAXLOG + 1];    /* records of `out` derived from input SEQ i in the log */
byte promised;               /* highest SEQ confirmed or delivered to anyone */
byte oc;                     /* the consumer's last SEQ (it discards SEQs <= oc) */
byte seen[MAXLOG + 1];       /* how many times the consumer processed the event of key k
                                (`in`) or derived from input SEQ i (`out`) */

#ifdef MUTANT_DELIVER_BEFORE_FSYNC
#define VISIBLE head         /* consumers fed what is only written */
#else
#define VISIBLE visible
#endif

#ifdef PIPELINE
#define CSTAGE OUT
#else
#define CSTAGE IN
#endif

inline promise(s) { if :: promised < s -> promised = s :: else fi }

inline count(s, k, o, d) {
  if
  :: s == IN -> cnt_in[k] = cnt_in[k] + d
  :: else -> cnt_out[o] = cnt_out[o] + d
  fi
}

/* Every confirmed event of `in` is in the log, once. */
inline check_confirmed() {
  i = 1;
  do
  :: i <= NEV -> assert(!confirmed_in[i] || cnt_in[i] == 1); i++
  :: else -> break
  od
}

/* The broker loop: one atomic step per PUB, per fsync started, per fsync completed. */
active proctype broker() {
  byte c, s, k, o, q, i, found;
  bool isnew;
end:
  do
  :: atomic {
       req?c, s, k, o ->
       /* the dedup window: (stage, source, id) -> SEQ */
       found = 0; i = head;
       do
       :: i > dedup_floor && found == 0 ->
          if :: lstage[i] == s && lkey[i] == k -> found = i :: else fi; i--
       :: else -> break
       od;
       isnew = (found == 0);
       if
       :: isnew ->
          assert(head < MAXLOG);
          head++;
          assert(head > promised);           /* a SEQ once confirmed or delivered is never reused */
          lstage[head] = s; lkey[head] = k; lsrc[head] = o;
          count(s, k, o, 1);
          assert(s != IN || cnt_in[k] <= 1);  /* no event twice in the log */
          assert(s != OUT || cnt_out[o] <= 1);  /* no output twice */
          found = head
       :: else
       fi;
#if defined(MUTANT_CONFIRM_BEFORE_FSYNC)
       reply[c]!k, found                     /* OK at write(2), as --fsync periodic/off */
#elif defined(MUTANT_REPEAT_CONFIRMED_AT_ONCE)
       if
       :: !isnew -> reply[c]!k, found         /* a repeat: OK at once */
       :: else -> unconf!c, k, found
       fi
#else
       unconf!c, k, found                    /* held back until the fsync that covers it */
#endif
     }
  :: atomic {                                /* prepareSync: a group of what came since */
       nsync < 2 &&
       (head > (nsync > 0 -> sync_head[nsync - 1] : durable) || len(unconf) > (nsync > 0 -> sync_conf[0] : 0)) ->
       sync_head[nsync] = head;
       sync_conf[nsync] = len(unconf) - (nsync > 0 -> sync_conf[0] : 0);
       sync_done[nsync] = false;
       nsync++
     }
  :: atomic { nsync > 0 && !sync_done[0] -> sync_done[0] = true }  /* the fsyncs end in */
  :: atomic { nsync > 1 && !sync_done[1] -> sync_done[1] = true }  /* either order */
  :: atomic {
#ifdef MUTANT_RELEASE_OUT_OF_ORDER
       /* a group released when its own fsync ends, the one before it still running */
       nsync > 1 && sync_done[1] && !sync_done[0] ->
       do
       :: sync_conf[0] + sync_conf[1] > 0 -> unconf?c, k, q; promise(q); reply[c]!k, q;
          if :: sync_conf[0] > 0 -> sync_conf[0]-- :: else -> sync_conf[1]-- fi
       :: else -> break
       od;
       if :: visible < sync_head[1] -> visible = sync_head[1] :: else fi;
       sync_head[0] = sync_head[1]; sync_done[0] = false; nsync = 1
     }
  :: atomic {
#endif
       nsync > 0 && sync_done[0] ->           /* completeSync, then release(group), in order */
       if :: durable < sync_head[0] -> durable = sync_head[0] :: else fi;
       do
       :: sync_conf[0] > 0 -> unconf?c, k, q; promise(q); reply[c]!k, q; sync_conf[0]--
       :: else -> break
       od;
       if :: visible < sync_head[0] -> visible = sync_head[0] :: else fi;
       sync_head[0] = sync_head[1]; sync_conf[0] = sync_conf[1]; sync_done[0] = sync_done[1];
       sync_head[1] = 0; sync_conf[1] = 0; sync_done[1] = false;
       nsync--
     }
  od
}

/* Publishes events 1..NEV to `in`, each with the same id until it is confirmed. */
active proctype publisher() {
  byte e = 1, k, q, ep, retries;
  do
  :: e > NEV -> break
  :: else ->
     atomic { ep = epoch; req!PUBLISHER, IN, e, 0 };
     do
     :: reply[PUBLISHER]?k, q ->
        if
        :: k == e -> confirmed_in[e] = true; e++; break
        :: else                              /* the OK of an earlier attempt */
        fi
     :: ep != epoch -> break                 /* the connection broke: send again */
     :: retries < RETRY -> retries++; break  /* no OK in time: send again */
     od
  od
}

#ifdef PIPELINE
/* The plugin runner, one batch of one event at a time; its crash is the crasher's. */
active proctype plugin() {
  byte k, q;
end:
  do
  :: atomic {                                /* consume the next event after appliedSeq */
       pc == P_IDLE && applied < VISIBLE ->
       applied++; promise(applied);
       if
       :: lstage[applied] == IN ->
          st++;
#ifdef MUTANT_RANDOM_OUTPUT_ID
          okey = applied + 4 * pinc;         /* an id that differs per run */
#else
          okey = applied;                    /* <plugin>:<seq>:0 */
#endif
          pc = P_PUB
       :: else
       fi
     }
  :: atomic { pc == P_PUB -> pep = epoch; req!PLUGIN, OUT, okey, applied; pc = P_WAIT }
  :: atomic {
       pc == P_WAIT && reply[PLUGIN]?[k, q] -> reply[PLUGIN]?k, q;
       if
       :: k == okey -> pc = P_DONE           /* confirmed: ACK */
       :: else
       fi
     }
  :: atomic { pc == P_WAIT && pep != epoch -> pc = P_PUB }  /* reconnect, resend */
#ifdef MUTANT_COMMIT_BEFORE_CONFIRM
  :: atomic { pc == P_WAIT -> snap_seq = applied; snap_st = st }  /* commits with output unconfirmed */
#endif
  :: atomic {
       pc == P_DONE ->
       if
       :: snap_seq = applied; snap_st = st   /* commit state with its SEQ (window empty) */
       :: skip                               /* not due yet */
       fi;
       pc = P_IDLE
     }
  od
}
#endif

/* A durable consumer of CSTAGE that discards SEQs it has processed. */
active proctype consumer() {
end:
  do
  :: atomic {
       oc < VISIBLE ->
       oc++; promise(oc);
       if
       :: lstage[oc] == IN && CSTAGE == IN -> seen[lkey[oc]]++; assert(seen[lkey[oc]] == 1)
       :: lstage[oc] == OUT && CSTAGE == OUT -> seen[lsrc[oc]]++; assert(seen[lsrc[oc]] == 1)
       :: else
       fi
     }
  od
}

/* Crashes the broker or the plugin between any two of their steps. */
active proctype crasher() {
  byte i;
  do
  :: bcrashes < BCRASH ->
     atomic {
       bcrashes++;
       /* Process crash: everything written survives in the page cache. Power loss:
          the durable prefix and any prefix of the rest (the torn tail is cut). */
       do
       :: head > durable ->
#ifndef PROCESS_CRASH_ONLY
          assert(head > promised);           /* nothing confirmed or delivered is lost */
          count(lstage[head], lkey[head], lsrc[head], -1);
          lstage[head] = 0; lkey[head] = 0; lsrc[head] = 0;
          head--
#else
          break
#endif
       :: break
       od;
       /* Restart: opening fsyncs every segment; all of the log is durable and visible. */
       durable = head; visible = head;
       nsync = 0; sync_head[0] = 0; sync_head[1] = 0; sync_conf[0] = 0; sync_conf[1] = 0;
       sync_done[0] = false; sync_done[1] = false;
#ifdef MUTANT_DEDUP_NOT_REBUILT
       dedup_floor = head;                   /* the window starts empty */
#else
       dedup_floor = 0;                      /* rebuilt from the log */
#endif
       do :: req?_, _, _, _ :: empty(req) -> break od;
       do :: unconf?_, _, _ :: empty(unconf) -> break od;
       do :: reply[0]?_, _ :: empty(reply[0]) -> break od;
       do :: reply[1]?_, _ :: empty(reply[1]) -> break od;
       epoch++;
       check_confirmed()
     }
#ifdef PIPELINE
  :: pcrashes < PCRASH ->
     atomic {
       pcrashes++; pinc++;
       applied = snap_seq; st = snap_st; pc = P_IDLE; okey = 0;  /* restart from the snapshot */
       do :: reply[PLUGIN]?_, _ :: empty(reply[PLUGIN]) -> break od
     }
#endif
  :: break
  od
}

/* When nothing can move any more: every event confirmed, in the log once, and
   (pipeline) its output in `out` once and processed once by the consumer. */
active proctype final() {
  byte i, n;
  timeout ->
  atomic {
    check_confirmed();
    i = 1;
    do
    :: i <= NEV -> assert(confirmed_in[i]); i++
    :: else -> break
    od;
#ifdef PIPELINE
    i = 1; n = 0;
    do
    :: i <= head ->
       if
       :: lstage[i] == IN -> assert(cnt_out[i] == 1); assert(seen[i] == 1); n++
       :: lstage[i] == OUT -> assert(lstage[lsrc[i]] == IN)
       :: else
       fi;
       i++
    :: else -> break
    od;
    assert(st == n);                         /* the plugin's state counts each input once */
#else
    i = 1;
    do
    :: i <= NEV -> assert(seen[i] == 1); i++
    :: else -> break
    od
#endif
  }
}
