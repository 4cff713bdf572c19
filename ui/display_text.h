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

}  // namespace tg::ui
