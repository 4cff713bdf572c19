<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en" sourcelanguage="en">
<context>
    <name>DisplayText</name>
    <message>
        <source>engine_start</source>
        <comment>event kind</comment>
        <translation>engine start</translation>
    </message>
    <message>
        <source>engine_stop</source>
        <comment>event kind</comment>
        <translation>engine stop</translation>
    </message>
    <message>
        <source>burst_429_start</source>
        <comment>event kind</comment>
        <translation>429 burst start</translation>
    </message>
    <message>
        <source>burst_429_end</source>
        <comment>event kind</comment>
        <translation>429 burst end</translation>
    </message>
    <message>
        <source>breaker</source>
        <comment>event kind</comment>
        <translation>breaker</translation>
    </message>
    <message>
        <source>quota_change</source>
        <comment>event kind</comment>
        <translation>quota change</translation>
    </message>
    <message>
        <source>quota_exhausted</source>
        <comment>event kind</comment>
        <translation>quota exhausted</translation>
    </message>
    <message>
        <source>operator</source>
        <comment>event kind</comment>
        <translation>operator</translation>
    </message>
    <message>
        <source>config_reload</source>
        <comment>event kind</comment>
        <translation>config reload</translation>
    </message>
    <message>
        <source>shed</source>
        <comment>event kind</comment>
        <translation>shed</translation>
    </message>
    <message>
        <source>request_failed</source>
        <comment>event kind</comment>
        <translation>request failed</translation>
    </message>
    <message>
        <source>history_gap</source>
        <comment>event kind</comment>
        <translation>history gap</translation>
    </message>
    <message>
        <source>info</source>
        <comment>event severity</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>warn</source>
        <comment>event severity</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>error</source>
        <comment>event severity</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>closed</source>
        <comment>circuit breaker state</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>half-open</source>
        <comment>circuit breaker state</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>open</source>
        <comment>circuit breaker state</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 req/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 tokens/min</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>none</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Refused: no group &quot;%1&quot; (%2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Paused %1 on all groups</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Paused %1 on %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Resumed %1 on all groups</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Resumed %1 on %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Paused group %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Resumed group %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Drained %1: %2 queued requests cancelled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Concurrency of all groups: %1 → %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Concurrency of %1: %2 → %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rate ceiling of all groups: %1 → %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rate ceiling of %1: %2 → %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (by %2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>shared_quota</source>
        <comment>event kind</comment>
        <translation>shared quota</translation>
    </message>
    <message>
        <source>forever</source>
        <comment>duration</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 d</source>
        <comment>duration: days</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 ms</source>
        <comment>duration</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 s</source>
        <comment>duration</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 min %2 s</source>
        <comment>duration</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 h %2 min</source>
        <comment>duration</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 d %2 h</source>
        <comment>duration</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>requests</source>
        <comment>quota dimension</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>tokens</source>
        <comment>quota dimension</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>quota exhausted</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>429 without quota headers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>429 with Retry-After</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>429, window used up</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>deadline passed while queued</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>queue full</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>breaker open past the deadline</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>paused past the deadline</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>quota exhausted beyond the wait cap</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>draining</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Engine started (%n group(s))</source>
        <translation>
            <numerusform>Engine started (%n group)</numerusform>
            <numerusform>Engine started (%n groups)</numerusform>
        </translation>
    </message>
    <message>
        <source>Engine stopped</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>429: quota exhausted</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>429 burst</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1, Retry-After %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1, reset in %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>429 burst over: %1 in %2, peak %3/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Breaker %1 → %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The upstream&apos;s %1 limit changed: %2 → %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Quota exhausted until %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Quota exhausted until %1 (key %2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n request(s) shed: %1</source>
        <translation>
            <numerusform>%n request shed: %1</numerusform>
            <numerusform>%n requests shed: %1</numerusform>
        </translation>
    </message>
    <message>
        <source>the write queue overflowed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>History lost %1 rows: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Shared quota: shared with the fleet through Redis</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Shared quota: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Key %1 held until %2: %3 on instance %4</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Request failed: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>group paused</source>
        <comment>wait</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 paused</source>
        <comment>wait: a tier</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>concurrency of all groups %1/%2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>concurrency %1/%2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>rate ceiling %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>rate ceiling of all groups %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>breaker open until %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>breaker half-open: one request tests the upstream</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Retry-After until %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Retry-After (HTTP %1) until %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>window used up, resets at %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>quota exhausted until %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>refused, Retry-After: holding %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>429s without quota headers: backing off %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>refused: pausing %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>refused: one request goes alone until one passes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: refill in %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 exhausted, reset in %2 (one request tests it in %3)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 exhausted, reset in %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: none left, waiting for answers in flight</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: none left, next in %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: next in %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>fleet: %1 on %2, until %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>shared quota: the fleet&apos;s next lease for this instance</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>shared quota: the fleet&apos;s capacity is spent</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>shared quota: waiting for a lease</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>share of 429s</source>
        <comment>incident reason</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>breaker open</source>
        <comment>incident reason</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>queue growth</source>
        <comment>incident reason</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>requests shed</source>
        <comment>incident reason</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>shared</source>
        <comment>shared quota mode</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>fallback</source>
        <comment>shared quota mode</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>starting</source>
        <comment>shared quota mode</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The upstream&apos;s %1 limit changed: %2 → %3 (key %4)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Shared quota: Redis unreachable or refusing (%2), this instance takes 1/%1 of each shared limit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Shared quota: Redis unreachable or refusing, this instance takes 1/%1 of each shared limit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>shared quota (Redis unreachable or refusing): this instance&apos;s share</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>share of 5xx</source>
        <comment>incident reason</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tollgate (pid %1) ended without stopping: killed, crashed or the machine went down; recorded until here</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Configuration reload refused, nothing changed: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Configuration reloaded: nothing to change live</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Configuration reloaded: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>; at the next start: %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>QObject</name>
    <message>
        <source>Remaining quota</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>429 per second</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Breaker state</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Queue depth per tier</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Responses per second</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Latency p50 / p95 (ms)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>In flight vs concurrency limit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remaining</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>429/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Breaker</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Queues</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Responses</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Latency</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>In flight</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Requests left in the upstream window per group (solid); limit dashed; tokens dotted, right axis</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>429 responses per second, per group</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Circuit breaker per group: green closed, amber half-open, red open</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Requests waiting in each tier&apos;s queue, all groups</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Responses per second, all groups: 2xx, 429, 5xx</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Response latency per group: p95 solid, p50 dotted</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Requests in flight per group (solid) against its effective limit (dashed)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>requests</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>queued</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>per s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 limit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 token limit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 p95</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 p50</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>stopped</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>running</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>draining</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cannot write %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ETA –</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ETA %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Switch upstream</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Could not start Tollgate again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Switch &amp;upstream config...</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run on another config: the simulator, or a real provider whose key comes from an environment variable</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Upstream config</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tollgate config (*.json)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop this session and run on %1?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Switch to the built-in &amp;simulator demo</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop this session and run the built-in simulator demo?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> (replay, read-only)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (simulator %2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>off: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Gateway: off (%1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Gateway: http://%1 · 1 connection</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Gateway: http://%1 · %2 connections</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>tg::ui::AlertTray</name>
    <message>
        <source>Tollgate: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Notify when an &amp;incident starts (429s)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Notify when a &amp;breaker opens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Notify when a &amp;quota is exhausted</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>all fine</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>429s on %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>breaker open on %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>quota exhausted on %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>429s started on %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The breaker of %1 opened: its requests wait</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The quota of %1 is exhausted</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tollgate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Click to open the dashboard there.</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>429s on %1 and %n more group(s)</source>
        <translation>
            <numerusform>429s on %1 and %n more group</numerusform>
            <numerusform>429s on %1 and %n more groups</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>breaker open on %1 and %n more group(s)</source>
        <translation>
            <numerusform>breaker open on %1 and %n more group</numerusform>
            <numerusform>breaker open on %1 and %n more groups</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>quota exhausted on %1 and %n more group(s)</source>
        <translation>
            <numerusform>quota exhausted on %1 and %n more group</numerusform>
            <numerusform>quota exhausted on %1 and %n more groups</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>tg::ui::ChartPanelWidget</name>
    <message>
        <source>&amp;Window:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>5 min</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>15 min</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>1 h</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>6 h</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Charts:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show or hide: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dashboard cost: not measured yet</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dashboard cost: %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>tg::ui::ControlsWidget</name>
    <message>
        <source>Pause &amp;group</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Drain queue…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Global concurrency</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Group concurrency</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>All groups</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pause %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Hold every group&apos;s %1 queue; requests wait until resumed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tiers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>One group</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>G&amp;roup</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Co&amp;ncurrency</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Drain %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Read-only: no engine attached</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pause P0</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pause the highest-priority tier (P0) for %1? Interactive traffic will wait.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Resume %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Resume &amp;group</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rate ce&amp;iling</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> req/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> tokens/min</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sends are paced to this rate, beneath what the quota allows; 0 = no ceiling</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rate ceiling, requests per second</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rate ceiling, tokens per minute</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>req/s: none</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>tokens/min: none</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Concurrenc&amp;y</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>R&amp;ate ceiling</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Drop every request queued for %1? Requests in flight finish.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 is paused on all groups: resume it under All groups</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pause the highest-priority tier (P0) for every group? Interactive traffic will wait.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>all groups</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the selected group</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>tg::ui::DesktopNotifier</name>
    <message>
        <source>Open the dashboard there</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>tg::ui::EventLogModel</name>
    <message>
        <source>quota exhausted</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>burst</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>other error</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Time</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Severity</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Kind</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Group</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>429 class</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Message</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>tg::ui::EventLogWidget</name>
    <message>
        <source>All groups</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>All kinds</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Info and up</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Warnings and errors</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Errors</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Fil&amp;ter:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Events</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Filter by group</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Filter by kind</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Filter by severity</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>tg::ui::FleetWidget</name>
    <message>
        <source>Instance</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Mode</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>OK/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Share</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>In flight</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>429s</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Shared quota: %1 · %n instance(s)</source>
        <translation>
            <numerusform>Shared quota: %1 · %n instance</numerusform>
            <numerusform>Shared quota: %1 · %n instances</numerusform>
        </translation>
    </message>
    <message>
        <source>–</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> (this)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Redis: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> · Redis unreachable or refusing, this instance takes 1/%1 of each shared limit</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>tg::ui::GroupCardWidget</name>
    <message>
        <source>Group %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>remaining –</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>reset in</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>req/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>429/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>p95</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>in flight</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>queue</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 / %2 requests</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 / %2 tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 requests left, limit unknown</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>remaining unknown</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>tokens %1 / %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>reset in %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>429/s %1 (%2%)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>req/s %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>429/s –</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>req/s –</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>p95 %1 ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>in flight %1 / %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>queue P0 %1 · P1 %2 · P2 %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>group paused</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 paused</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>draining</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>waiting: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: breaker %2, %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>rate ceiling %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>breaker %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>tg::ui::MainWindow</name>
    <message>
        <source>Tollgate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Groups</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Controls</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Workload</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Events</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Language: %1 from the next start</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Mode</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Replay</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Replay recorded history: incidents, any time range, what-if re-drive</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tollgate – replay</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Upstream: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>–</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Engine: %1 · in flight %2 / %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Last snapshot: just now</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Last snapshot: %1 s ago ⚠</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Engine: –</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Last snapshot: none</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>History: off</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>History: %1 (%2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>size unknown</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Notifications</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No system tray here: the status bar shows the state</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Controls</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pause or resume P%1 on all groups</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Alerts: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No system tray: alerts show here only</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Fleet</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Last 5 minutes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Last 15 minutes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Last hour</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Last 6 hours</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Li&amp;ve</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Replay</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>tg::ui::RedrawStats</name>
    <message>
        <source>%1 ms/redraw, %2% UI thread busy</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>tg::ui::ReplayPanelWidget</name>
    <message>
        <source>#</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Duration</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Groups</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Peak 429/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>429s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Shed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Operator actions</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show range</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Whole file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Previous incident</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Step back 5 s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Play / pause</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Step forward 5 s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Next incident</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>PNG…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CSV…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Report…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>What-if…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Re-drive this stretch&apos;s workload against its upstream with other settings</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>From</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>to</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export charts to</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export data</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CSV (*.csv)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export report</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Markdown (*.md)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reasons: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Start</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Incidents</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Replay speed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>To</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pause</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Play</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>tg::ui::ReplayScrubWidget</name>
    <message>
        <source>Playhead: click or drag, or arrow keys (a second; Page Up/Down a tenth; Home/End). Red: incidents; blue: operator actions</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Playhead</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>tg::ui::SessionWorkloadController</name>
    <message>
        <source>synthetic profile (config)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no such profile: %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>tg::ui::TimeChartWidget</name>
    <message numerus="yes">
        <source>%n more not closed</source>
        <translation>
            <numerusform>%n more not closed</numerusform>
            <numerusform>%n more not closed</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n closed</source>
        <translation>
            <numerusform>%n closed</numerusform>
            <numerusform>%n closed</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n without data</source>
        <translation>
            <numerusform>%n without data</numerusform>
            <numerusform>%n without data</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n more</source>
        <translation>
            <numerusform>%n more</numerusform>
            <numerusform>%n more</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>tg::ui::TranslationLoader</name>
    <message>
        <source>System language</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>tg::ui::WhatIfDialog</name>
    <message>
        <source>Run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>What-if re-drive</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Time compression: the re-drive runs this many times faster than the recording</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>as recorded</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Group</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Concurrency</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Bucket fraction</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Breaker share</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Breaker min calls</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot read the range: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Speed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Global concurrency</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Concurrency × (all groups)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Paused tiers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>429s rec.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>429s what-if</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Shed rec.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Shed what-if</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Done rec. (s)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Done what-if (s)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>P0 p50 rec.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>P0 p50 what-if</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>P0 p95 rec.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>P0 p95 what-if</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Re-driving %1 s of history at %2×…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Failed: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Done in %1 s wall at %2×%3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> (cancelled)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 · recorded</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 · what-if</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Lines: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>total</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>this recording predates recorded engine settings: re-driven on the defaults</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Groups</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1, %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Recorded and what-if</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>tg::ui::WorkloadPanelWidget</name>
    <message>
        <source>&amp;Start</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Open JSONL…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pa&amp;use</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cance&amp;l</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open workload</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>JSON lines (*.jsonl *.ndjson);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Res&amp;ume</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 / %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 done</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> (paused)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 ok, %2 failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>results: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>error: %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
</TS>
