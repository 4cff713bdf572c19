// The dashboard's words for core's enums, through Qt's translations: English as core names them (so the
// dashboard reads as the history files and the command line do), other languages from resources/translations.
// Core keeps its own names for files, history and logs; these are for the screen only. UI thread only
// (they read the installed translators).
#pragma once

#include "event.h"
#include "types.h"
#include "wait_reason.h"

#include <QString>

namespace tg::ui {

QString eventKindText(EventKind kind);
QString severityText(Severity severity);
QString breakerStateText(BreakerState state);

// A rate ceiling in words: "10 req/s · 90000 tokens/min", "none" when there is none.
QString rateCeilingText(const RateCeilingConfig& c);
// What an event says on screen, worded here from its kind and detail (never from core's English message): an
// operator action ("Paused P2 on all groups", "Concurrency of batch: 16 → 8"), a 429 burst, a breaker, a quota,
// shed requests, the fleet's shared quota. An event whose detail this version cannot read (a newer
// history file, a hand-written one) shows core's message as it was written.
QString eventMessageText(const Event& e);

// A duration, in the bands of core's formatDuration: "850 ms", "8.5 s", "42 s", "4 min 10 s", "3 h 05 min",
// "2 d 04 h"; "–" for NaN, "forever" for infinity.
QString durationText(double seconds);
// "requests", "tokens".
QString dimensionText(Dimension d);
// Why a group's requests wait, from the engine's code and numbers: "Retry-After until 12:03:41",
// "tokens: next in 3.2 s"; empty when not waiting.
QString waitReasonText(const WaitReason& w);
// What an incident was detected by, from history's names ("429_share", "5xx_share", "breaker_open", "queue_growth", "shed").
QString incidentReasonText(const std::string& reason);
// A fleet member's or the shared quota's mode ("starting", "shared", "fallback").
QString sharedModeText(const std::string& mode);

}  // namespace tg::ui
