// Core value types carried across threads by queued Qt signals.
#pragma once

#include "event.h"
#include "snapshot.h"

#include <QMetaType>

Q_DECLARE_METATYPE(tg::SnapshotPtr)
Q_DECLARE_METATYPE(tg::Event)

namespace tg::ui {
// Registers the types above with Qt's meta-type system. Idempotent; call before any queued connection.
void registerMetaTypes();
}  // namespace tg::ui
