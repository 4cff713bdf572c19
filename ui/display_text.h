// The dashboard's words for core's enums, through Qt's translations: English as core names them (so the
// dashboard reads as the history files and the command line do), other languages from resources/translations.
// Core keeps its own names for files, history and logs; these are for the screen only. UI thread only
// (they read the installed translators).
#pragma once

#include "event.h"
#include "types.h"

#include <QString>

namespace tg::ui {

QString eventKindText(EventKind kind);
QString severityText(Severity severity);
QString breakerStateText(BreakerState state);

// A rate ceiling in words: "10 req/s · 90000 tokens/min", "none" when there is none.
QString rateCeilingText(const RateCeilingConfig& c);
// What an event says on screen: an operator action in words from its detail ("Paused P2 on all groups",
// "Concurrency of batch: 16 → 8"); any other event, or an action this version does not know, as core wrote it.
QString eventMessageText(const Event& e);

}  // namespace tg::ui
