<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>DisplayText</name>
    <message>
        <source>engine_start</source>
        <comment>event kind</comment>
        <translation>引擎启动</translation>
    </message>
    <message>
        <source>engine_stop</source>
        <comment>event kind</comment>
        <translation>引擎停止</translation>
    </message>
    <message>
        <source>burst_429_start</source>
        <comment>event kind</comment>
        <translation>429 突发开始</translation>
    </message>
    <message>
        <source>burst_429_end</source>
        <comment>event kind</comment>
        <translation>429 突发结束</translation>
    </message>
    <message>
        <source>breaker</source>
        <comment>event kind</comment>
        <translation>熔断器</translation>
    </message>
    <message>
        <source>quota_change</source>
        <comment>event kind</comment>
        <translation>配额变化</translation>
    </message>
    <message>
        <source>quota_exhausted</source>
        <comment>event kind</comment>
        <translation>配额耗尽</translation>
    </message>
    <message>
        <source>operator</source>
        <comment>event kind</comment>
        <translation>操作员</translation>
    </message>
    <message>
        <source>config_reload</source>
        <comment>event kind</comment>
        <translation>配置重载</translation>
    </message>
    <message>
        <source>shed</source>
        <comment>event kind</comment>
        <translation>丢弃</translation>
    </message>
    <message>
        <source>request_failed</source>
        <comment>event kind</comment>
        <translation>请求失败</translation>
    </message>
    <message>
        <source>history_gap</source>
        <comment>event kind</comment>
        <translation>历史缺口</translation>
    </message>
    <message>
        <source>info</source>
        <comment>event severity</comment>
        <translation>信息</translation>
    </message>
    <message>
        <source>warn</source>
        <comment>event severity</comment>
        <translation>警告</translation>
    </message>
    <message>
        <source>error</source>
        <comment>event severity</comment>
        <translation>错误</translation>
    </message>
    <message>
        <source>closed</source>
        <comment>circuit breaker state</comment>
        <translation>关闭</translation>
    </message>
    <message>
        <source>half-open</source>
        <comment>circuit breaker state</comment>
        <translation>半开</translation>
    </message>
    <message>
        <source>open</source>
        <comment>circuit breaker state</comment>
        <translation>打开</translation>
    </message>
    <message>
        <source>%1 req/s</source>
        <translation>%1 请求/秒</translation>
    </message>
    <message>
        <source>%1 tokens/min</source>
        <translation>%1 令牌/分钟</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>Refused: no group &quot;%1&quot; (%2)</source>
        <translation>已拒绝：没有分组“%1”（%2）</translation>
    </message>
    <message>
        <source>Paused %1 on all groups</source>
        <translation>已在所有分组暂停 %1</translation>
    </message>
    <message>
        <source>Paused %1 on %2</source>
        <translation>已在 %2 暂停 %1</translation>
    </message>
    <message>
        <source>Resumed %1 on all groups</source>
        <translation>已在所有分组恢复 %1</translation>
    </message>
    <message>
        <source>Resumed %1 on %2</source>
        <translation>已在 %2 恢复 %1</translation>
    </message>
    <message>
        <source>Paused group %1</source>
        <translation>已暂停分组 %1</translation>
    </message>
    <message>
        <source>Resumed group %1</source>
        <translation>已恢复分组 %1</translation>
    </message>
    <message>
        <source>Drained %1: %2 queued requests cancelled</source>
        <translation>已清空 %1：取消了 %2 个排队请求</translation>
    </message>
    <message>
        <source>Concurrency of all groups: %1 → %2</source>
        <translation>所有分组的并发：%1 → %2</translation>
    </message>
    <message>
        <source>Concurrency of %1: %2 → %3</source>
        <translation>%1 的并发：%2 → %3</translation>
    </message>
    <message>
        <source>Rate ceiling of all groups: %1 → %2</source>
        <translation>所有分组的速率上限：%1 → %2</translation>
    </message>
    <message>
        <source>Rate ceiling of %1: %2 → %3</source>
        <translation>%1 的速率上限：%2 → %3</translation>
    </message>
    <message>
        <source>%1 (by %2)</source>
        <translation>%1（操作员 %2）</translation>
    </message>
    <message>
        <source>shared_quota</source>
        <comment>event kind</comment>
        <translation>共享配额</translation>
    </message>
    <message>
        <source>forever</source>
        <comment>duration</comment>
        <translation>永远</translation>
    </message>
    <message>
        <source>%1 d</source>
        <comment>duration: days</comment>
        <translation>%1 天</translation>
    </message>
    <message>
        <source>%1 ms</source>
        <comment>duration</comment>
        <translation>%1 毫秒</translation>
    </message>
    <message>
        <source>%1 s</source>
        <comment>duration</comment>
        <translation>%1 秒</translation>
    </message>
    <message>
        <source>%1 min %2 s</source>
        <comment>duration</comment>
        <translation>%1 分 %2 秒</translation>
    </message>
    <message>
        <source>%1 h %2 min</source>
        <comment>duration</comment>
        <translation>%1 小时 %2 分</translation>
    </message>
    <message>
        <source>%1 d %2 h</source>
        <comment>duration</comment>
        <translation>%1 天 %2 小时</translation>
    </message>
    <message>
        <source>requests</source>
        <comment>quota dimension</comment>
        <translation>请求数</translation>
    </message>
    <message>
        <source>tokens</source>
        <comment>quota dimension</comment>
        <translation>令牌数</translation>
    </message>
    <message>
        <source>quota exhausted</source>
        <translation>配额耗尽</translation>
    </message>
    <message>
        <source>429 without quota headers</source>
        <translation>429（无配额响应头）</translation>
    </message>
    <message>
        <source>429 with Retry-After</source>
        <translation>429（带 Retry-After）</translation>
    </message>
    <message>
        <source>429, window used up</source>
        <translation>429，窗口已用尽</translation>
    </message>
    <message>
        <source>deadline passed while queued</source>
        <translation>排队时超过截止时间</translation>
    </message>
    <message>
        <source>queue full</source>
        <translation>队列已满</translation>
    </message>
    <message>
        <source>breaker open past the deadline</source>
        <translation>熔断器打开直至超过截止时间</translation>
    </message>
    <message>
        <source>paused past the deadline</source>
        <translation>暂停直至超过截止时间</translation>
    </message>
    <message>
        <source>quota exhausted beyond the wait cap</source>
        <translation>配额耗尽，超出等待上限</translation>
    </message>
    <message>
        <source>draining</source>
        <translation>排空中</translation>
    </message>
    <message numerus="yes">
        <source>Engine started (%n group(s))</source>
        <translation>
            <numerusform>引擎已启动（%n 个分组）</numerusform>
        </translation>
    </message>
    <message>
        <source>Engine stopped</source>
        <translation>引擎已停止</translation>
    </message>
    <message>
        <source>429: quota exhausted</source>
        <translation>429：配额耗尽</translation>
    </message>
    <message>
        <source>429 burst</source>
        <translation>429 突发</translation>
    </message>
    <message>
        <source>%1, Retry-After %2</source>
        <translation>%1，Retry-After %2</translation>
    </message>
    <message>
        <source>%1, reset in %2</source>
        <translation>%1，%2后重置</translation>
    </message>
    <message>
        <source>429 burst over: %1 in %2, peak %3/s</source>
        <translation>429 突发结束：%2 内 %1 次，峰值 %3 次/秒</translation>
    </message>
    <message>
        <source>Breaker %1 → %2</source>
        <translation>熔断器 %1 → %2</translation>
    </message>
    <message>
        <source>The upstream&apos;s %1 limit changed: %2 → %3</source>
        <translation>上游的%1限额已变更：%2 → %3</translation>
    </message>
    <message>
        <source>Quota exhausted until %1</source>
        <translation>配额耗尽，直到 %1</translation>
    </message>
    <message>
        <source>Quota exhausted until %1 (key %2)</source>
        <translation>配额耗尽，直到 %1（密钥 %2）</translation>
    </message>
    <message numerus="yes">
        <source>%n request(s) shed: %1</source>
        <translation>
            <numerusform>已丢弃 %n 个请求：%1</numerusform>
        </translation>
    </message>
    <message>
        <source>the write queue overflowed</source>
        <translation>写入队列溢出</translation>
    </message>
    <message>
        <source>History lost %1 rows: %2</source>
        <translation>历史记录丢失 %1 行：%2</translation>
    </message>
    <message>
        <source>Shared quota: shared with the fleet through Redis</source>
        <translation>共享配额：通过 Redis 与集群共享</translation>
    </message>
    <message>
        <source>Shared quota: %1</source>
        <translation>共享配额：%1</translation>
    </message>
    <message>
        <source>Key %1 held until %2: %3 on instance %4</source>
        <translation>密钥 %1 暂停使用至 %2：实例 %4 上%3</translation>
    </message>
    <message>
        <source>Request failed: %1</source>
        <translation>请求失败：%1</translation>
    </message>
    <message>
        <source>group paused</source>
        <comment>wait</comment>
        <translation>分组已暂停</translation>
    </message>
    <message>
        <source>%1 paused</source>
        <comment>wait: a tier</comment>
        <translation>%1 已暂停</translation>
    </message>
    <message>
        <source>concurrency of all groups %1/%2</source>
        <translation>所有分组的并发 %1/%2</translation>
    </message>
    <message>
        <source>concurrency %1/%2</source>
        <translation>并发 %1/%2</translation>
    </message>
    <message>
        <source>rate ceiling %1</source>
        <translation>速率上限 %1</translation>
    </message>
    <message>
        <source>rate ceiling of all groups %1</source>
        <translation>所有分组的速率上限 %1</translation>
    </message>
    <message>
        <source>breaker open until %1</source>
        <translation>熔断器打开至 %1</translation>
    </message>
    <message>
        <source>breaker half-open: one request tests the upstream</source>
        <translation>熔断器半开：一个请求试探上游</translation>
    </message>
    <message>
        <source>Retry-After until %1</source>
        <translation>Retry-After 至 %1</translation>
    </message>
    <message>
        <source>Retry-After (HTTP %1) until %2</source>
        <translation>Retry-After（HTTP %1）至 %2</translation>
    </message>
    <message>
        <source>window used up, resets at %1</source>
        <translation>窗口已用尽，%1 重置</translation>
    </message>
    <message>
        <source>quota exhausted until %1</source>
        <translation>配额耗尽，直到 %1</translation>
    </message>
    <message>
        <source>refused, Retry-After: holding %1</source>
        <translation>被拒绝，Retry-After：暂停 %1</translation>
    </message>
    <message>
        <source>429s without quota headers: backing off %1</source>
        <translation>429 无配额响应头：退避 %1</translation>
    </message>
    <message>
        <source>refused: pausing %1</source>
        <translation>被拒绝：暂停 %1</translation>
    </message>
    <message>
        <source>refused: one request goes alone until one passes</source>
        <translation>被拒绝：单个请求先行试探，直到有请求通过</translation>
    </message>
    <message>
        <source>%1: refill in %2</source>
        <translation>%1：%2后补充</translation>
    </message>
    <message>
        <source>%1 exhausted, reset in %2 (one request tests it in %3)</source>
        <translation>%1已耗尽，%2后重置（%3后由一个请求试探）</translation>
    </message>
    <message>
        <source>%1 exhausted, reset in %2</source>
        <translation>%1已耗尽，%2后重置</translation>
    </message>
    <message>
        <source>%1: none left, waiting for answers in flight</source>
        <translation>%1：已无剩余，等待进行中请求的响应</translation>
    </message>
    <message>
        <source>%1: none left, next in %2</source>
        <translation>%1：已无剩余，%2后发送下一个</translation>
    </message>
    <message>
        <source>%1: next in %2</source>
        <translation>%1：%2后发送下一个</translation>
    </message>
    <message>
        <source>fleet: %1 on %2, until %3</source>
        <translation>集群：实例 %2 上%1，直到 %3</translation>
    </message>
    <message>
        <source>shared quota: the fleet&apos;s next lease for this instance</source>
        <translation>共享配额：等待集群给本实例的下一份租约</translation>
    </message>
    <message>
        <source>shared quota: the fleet&apos;s capacity is spent</source>
        <translation>共享配额：集群容量已用完</translation>
    </message>
    <message>
        <source>shared quota: waiting for a lease</source>
        <translation>共享配额：等待租约</translation>
    </message>
    <message>
        <source>share of 429s</source>
        <comment>incident reason</comment>
        <translation>429 占比</translation>
    </message>
    <message>
        <source>breaker open</source>
        <comment>incident reason</comment>
        <translation>熔断器打开</translation>
    </message>
    <message>
        <source>queue growth</source>
        <comment>incident reason</comment>
        <translation>队列增长</translation>
    </message>
    <message>
        <source>requests shed</source>
        <comment>incident reason</comment>
        <translation>请求被丢弃</translation>
    </message>
    <message>
        <source>shared</source>
        <comment>shared quota mode</comment>
        <translation>共享</translation>
    </message>
    <message>
        <source>fallback</source>
        <comment>shared quota mode</comment>
        <translation>后备</translation>
    </message>
    <message>
        <source>starting</source>
        <comment>shared quota mode</comment>
        <translation>启动中</translation>
    </message>
    <message>
        <source>The upstream&apos;s %1 limit changed: %2 → %3 (key %4)</source>
        <translation>上游的%1限额已变更：%2 → %3（密钥 %4）</translation>
    </message>
    <message>
        <source>Shared quota: Redis unreachable or refusing (%2), this instance takes 1/%1 of each shared limit</source>
        <translation>共享配额：Redis 不可达或拒绝（%2），本实例使用每项共享限额的 1/%1</translation>
    </message>
    <message>
        <source>Shared quota: Redis unreachable or refusing, this instance takes 1/%1 of each shared limit</source>
        <translation>共享配额：Redis 不可达或拒绝，本实例使用每项共享限额的 1/%1</translation>
    </message>
    <message>
        <source>shared quota (Redis unreachable or refusing): this instance&apos;s share</source>
        <translation>共享配额（Redis 不可达或拒绝）：本实例的份额</translation>
    </message>
    <message>
        <source>share of 5xx</source>
        <comment>incident reason</comment>
        <translation>5xx 占比</translation>
    </message>
    <message>
        <source>Tollgate (pid %1) ended without stopping: killed, crashed or the machine went down; recorded until here</source>
        <translation>Tollgate（pid %1）未正常停止即结束：被强制终止、崩溃或机器宕机；记录至此为止</translation>
    </message>
    <message>
        <source>Configuration reload refused, nothing changed: %1</source>
        <translation>配置重新加载被拒绝，未做任何更改：%1</translation>
    </message>
    <message>
        <source>Configuration reloaded: nothing to change live</source>
        <translation>配置已重新加载：没有可即时更改的项</translation>
    </message>
    <message>
        <source>Configuration reloaded: %1</source>
        <translation>配置已重新加载：%1</translation>
    </message>
    <message>
        <source>; at the next start: %1</source>
        <translation>；下次启动时生效：%1</translation>
    </message>
</context>
<context>
    <name>QObject</name>
    <message>
        <source>Remaining quota</source>
        <translation>剩余配额</translation>
    </message>
    <message>
        <source>429 per second</source>
        <translation>每秒 429 数</translation>
    </message>
    <message>
        <source>Breaker state</source>
        <translation>熔断器状态</translation>
    </message>
    <message>
        <source>Queue depth per tier</source>
        <translation>各优先级队列深度</translation>
    </message>
    <message>
        <source>Responses per second</source>
        <translation>每秒响应数</translation>
    </message>
    <message>
        <source>Latency p50 / p95 (ms)</source>
        <translation>延迟 p50 / p95（毫秒）</translation>
    </message>
    <message>
        <source>In flight vs concurrency limit</source>
        <translation>在途请求与并发上限</translation>
    </message>
    <message>
        <source>Remaining</source>
        <translation>剩余</translation>
    </message>
    <message>
        <source>429/s</source>
        <translation>429/秒</translation>
    </message>
    <message>
        <source>Breaker</source>
        <translation>熔断器</translation>
    </message>
    <message>
        <source>Queues</source>
        <translation>队列</translation>
    </message>
    <message>
        <source>Responses</source>
        <translation>响应</translation>
    </message>
    <message>
        <source>Latency</source>
        <translation>延迟</translation>
    </message>
    <message>
        <source>In flight</source>
        <translation>在途</translation>
    </message>
    <message>
        <source>Requests left in the upstream window per group (solid); limit dashed; tokens dotted, right axis</source>
        <translation>各组在上游窗口内剩余的请求数（实线）；上限为虚线；令牌为点线，见右轴</translation>
    </message>
    <message>
        <source>429 responses per second, per group</source>
        <translation>各组每秒的 429 响应数</translation>
    </message>
    <message>
        <source>Circuit breaker per group: green closed, amber half-open, red open</source>
        <translation>各组熔断器：绿色为关闭，琥珀色为半开，红色为打开</translation>
    </message>
    <message>
        <source>Requests waiting in each tier&apos;s queue, all groups</source>
        <translation>各优先级队列中等待的请求（所有组）</translation>
    </message>
    <message>
        <source>Responses per second, all groups: 2xx, 429, 5xx</source>
        <translation>每秒响应数（所有组）：2xx、429、5xx</translation>
    </message>
    <message>
        <source>Response latency per group: p95 solid, p50 dotted</source>
        <translation>各组响应延迟：p95 为实线，p50 为点线</translation>
    </message>
    <message>
        <source>Requests in flight per group (solid) against its effective limit (dashed)</source>
        <translation>各组在途请求（实线）与其有效上限（虚线）</translation>
    </message>
    <message>
        <source>requests</source>
        <translation>请求</translation>
    </message>
    <message>
        <source>queued</source>
        <translation>排队</translation>
    </message>
    <message>
        <source>per s</source>
        <translation>每秒</translation>
    </message>
    <message>
        <source>ms</source>
        <translation>毫秒</translation>
    </message>
    <message>
        <source>%1 limit</source>
        <translation>%1 上限</translation>
    </message>
    <message>
        <source>%1 tokens</source>
        <translation>%1 令牌</translation>
    </message>
    <message>
        <source>%1 token limit</source>
        <translation>%1 令牌上限</translation>
    </message>
    <message>
        <source>%1 p95</source>
        <translation>%1 p95</translation>
    </message>
    <message>
        <source>%1 p50</source>
        <translation>%1 p50</translation>
    </message>
    <message>
        <source>tokens</source>
        <translation>令牌</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>draining</source>
        <translation>排空中</translation>
    </message>
    <message>
        <source>cannot write %1</source>
        <translation>无法写入 %1</translation>
    </message>
    <message>
        <source>ETA –</source>
        <translation>预计剩余 –</translation>
    </message>
    <message>
        <source>ETA %1</source>
        <translation>预计剩余 %1</translation>
    </message>
    <message>
        <source>Switch upstream</source>
        <translation>切换上游</translation>
    </message>
    <message>
        <source>Could not start Tollgate again.</source>
        <translation>无法重新启动 Tollgate。</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>Switch &amp;upstream config...</source>
        <translation>切换上游配置(&amp;U)...</translation>
    </message>
    <message>
        <source>Run on another config: the simulator, or a real provider whose key comes from an environment variable</source>
        <translation>改用另一份配置运行：模拟器，或密钥取自环境变量的真实服务商</translation>
    </message>
    <message>
        <source>Upstream config</source>
        <translation>上游配置</translation>
    </message>
    <message>
        <source>Tollgate config (*.json)</source>
        <translation>Tollgate 配置 (*.json)</translation>
    </message>
    <message>
        <source>Stop this session and run on %1?</source>
        <translation>停止当前会话并改用 %1 运行？</translation>
    </message>
    <message>
        <source>Switch to the built-in &amp;simulator demo</source>
        <translation>切换到内置模拟器演示(&amp;S)</translation>
    </message>
    <message>
        <source>Stop this session and run the built-in simulator demo?</source>
        <translation>停止当前会话并运行内置模拟器演示？</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source> (replay, read-only)</source>
        <translation>（回放，只读）</translation>
    </message>
    <message>
        <source>%1 (simulator %2)</source>
        <translation>%1（模拟器 %2）</translation>
    </message>
    <message>
        <source>off: %1</source>
        <translation>关闭：%1</translation>
    </message>
    <message>
        <source>Gateway: off (%1)</source>
        <translation>网关：关闭（%1）</translation>
    </message>
    <message>
        <source>Gateway: http://%1 · 1 connection</source>
        <translation>网关：http://%1 · 1 个连接</translation>
    </message>
    <message>
        <source>Gateway: http://%1 · %2 connections</source>
        <translation>网关：http://%1 · %2 个连接</translation>
    </message>
</context>
<context>
    <name>tg::ui::AlertTray</name>
    <message>
        <source>Tollgate: %1</source>
        <translation>Tollgate：%1</translation>
    </message>
    <message>
        <source>Notify when an &amp;incident starts (429s)</source>
        <translation>事故开始时通知（429）(&amp;I)</translation>
    </message>
    <message>
        <source>Notify when a &amp;breaker opens</source>
        <translation>熔断器打开时通知(&amp;B)</translation>
    </message>
    <message>
        <source>Notify when a &amp;quota is exhausted</source>
        <translation>配额耗尽时通知(&amp;Q)</translation>
    </message>
    <message>
        <source>all fine</source>
        <translation>一切正常</translation>
    </message>
    <message>
        <source>429s on %1</source>
        <translation>%1 出现 429</translation>
    </message>
    <message>
        <source>breaker open on %1</source>
        <translation>%1 熔断器打开</translation>
    </message>
    <message>
        <source>quota exhausted on %1</source>
        <translation>%1 配额耗尽</translation>
    </message>
    <message>
        <source>429s started on %1</source>
        <translation>%1 开始出现 429</translation>
    </message>
    <message>
        <source>The breaker of %1 opened: its requests wait</source>
        <translation>%1 的熔断器已打开：其请求正在等待</translation>
    </message>
    <message>
        <source>The quota of %1 is exhausted</source>
        <translation>%1 的配额已耗尽</translation>
    </message>
    <message>
        <source>Tollgate</source>
        <translation>Tollgate</translation>
    </message>
    <message>
        <source>Click to open the dashboard there.</source>
        <translation>点击在该时刻打开仪表盘。</translation>
    </message>
    <message numerus="yes">
        <source>429s on %1 and %n more group(s)</source>
        <translation>
            <numerusform>%1 及另外 %n 个组出现 429</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>breaker open on %1 and %n more group(s)</source>
        <translation>
            <numerusform>%1 及另外 %n 个组熔断器打开</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>quota exhausted on %1 and %n more group(s)</source>
        <translation>
            <numerusform>%1 及另外 %n 个组配额耗尽</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>tg::ui::ChartPanelWidget</name>
    <message>
        <source>&amp;Window:</source>
        <translation>时间窗口(&amp;W)：</translation>
    </message>
    <message>
        <source>5 min</source>
        <translation>5 分钟</translation>
    </message>
    <message>
        <source>15 min</source>
        <translation>15 分钟</translation>
    </message>
    <message>
        <source>1 h</source>
        <translation>1 小时</translation>
    </message>
    <message>
        <source>6 h</source>
        <translation>6 小时</translation>
    </message>
    <message>
        <source>Charts:</source>
        <translation>图表：</translation>
    </message>
    <message>
        <source>Show or hide: %1</source>
        <translation>显示或隐藏：%1</translation>
    </message>
    <message>
        <source>Dashboard cost: not measured yet</source>
        <translation>仪表盘开销：尚未测量</translation>
    </message>
    <message>
        <source>Dashboard cost: %1</source>
        <translation>仪表盘开销：%1</translation>
    </message>
</context>
<context>
    <name>tg::ui::ControlsWidget</name>
    <message>
        <source>Pause &amp;group</source>
        <translation>暂停该组(&amp;G)</translation>
    </message>
    <message>
        <source>&amp;Drain queue…</source>
        <translation>排空队列(&amp;D)…</translation>
    </message>
    <message>
        <source>Global concurrency</source>
        <translation>全局并发</translation>
    </message>
    <message>
        <source>Group concurrency</source>
        <translation>组并发</translation>
    </message>
    <message>
        <source>All groups</source>
        <translation>所有组</translation>
    </message>
    <message>
        <source>Pause %1</source>
        <translation>暂停 %1</translation>
    </message>
    <message>
        <source>Hold every group&apos;s %1 queue; requests wait until resumed</source>
        <translation>暂停所有组的 %1 队列；请求会一直等待，直到恢复</translation>
    </message>
    <message>
        <source>Tiers</source>
        <translation>优先级</translation>
    </message>
    <message>
        <source>One group</source>
        <translation>单个组</translation>
    </message>
    <message>
        <source>G&amp;roup</source>
        <translation>组(&amp;R)</translation>
    </message>
    <message>
        <source>Co&amp;ncurrency</source>
        <translation>并发(&amp;N)</translation>
    </message>
    <message>
        <source>Drain %1</source>
        <translation>排空 %1</translation>
    </message>
    <message>
        <source>Read-only: no engine attached</source>
        <translation>只读：未连接引擎</translation>
    </message>
    <message>
        <source>Pause P0</source>
        <translation>暂停 P0</translation>
    </message>
    <message>
        <source>Pause the highest-priority tier (P0) for %1? Interactive traffic will wait.</source>
        <translation>暂停 %1 的最高优先级（P0）？交互式流量将会等待。</translation>
    </message>
    <message>
        <source>Resume %1</source>
        <translation>恢复 %1</translation>
    </message>
    <message>
        <source>Resume &amp;group</source>
        <translation>恢复该组(&amp;G)</translation>
    </message>
    <message>
        <source>Rate ce&amp;iling</source>
        <translation>速率上限(&amp;I)</translation>
    </message>
    <message>
        <source> req/s</source>
        <translation> 请求/秒</translation>
    </message>
    <message>
        <source> tokens/min</source>
        <translation> 令牌/分钟</translation>
    </message>
    <message>
        <source>Sends are paced to this rate, beneath what the quota allows; 0 = no ceiling</source>
        <translation>在配额允许的范围内按此速率匀速发送；0 = 无上限</translation>
    </message>
    <message>
        <source>Rate ceiling, requests per second</source>
        <translation>速率上限，每秒请求数</translation>
    </message>
    <message>
        <source>Rate ceiling, tokens per minute</source>
        <translation>速率上限，每分钟令牌数</translation>
    </message>
    <message>
        <source>req/s: none</source>
        <translation>请求/秒：无</translation>
    </message>
    <message>
        <source>tokens/min: none</source>
        <translation>令牌/分钟：无</translation>
    </message>
    <message>
        <source>Concurrenc&amp;y</source>
        <translation>并发(&amp;Y)</translation>
    </message>
    <message>
        <source>R&amp;ate ceiling</source>
        <translation>速率上限(&amp;A)</translation>
    </message>
    <message>
        <source>Drop every request queued for %1? Requests in flight finish.</source>
        <translation>丢弃 %1 排队中的所有请求？在途请求会继续完成。</translation>
    </message>
    <message>
        <source>%1 is paused on all groups: resume it under All groups</source>
        <translation>%1 已在所有组暂停：请在“所有组”下恢复</translation>
    </message>
    <message>
        <source>Pause the highest-priority tier (P0) for every group? Interactive traffic will wait.</source>
        <translation>暂停所有分组的最高优先级（P0）？交互式流量将会等待。</translation>
    </message>
    <message>
        <source>all groups</source>
        <translation>所有分组</translation>
    </message>
    <message>
        <source>the selected group</source>
        <translation>所选分组</translation>
    </message>
</context>
<context>
    <name>tg::ui::DesktopNotifier</name>
    <message>
        <source>Open the dashboard there</source>
        <translation>在该时刻打开仪表盘</translation>
    </message>
</context>
<context>
    <name>tg::ui::EventLogModel</name>
    <message>
        <source>quota exhausted</source>
        <translation>配额耗尽</translation>
    </message>
    <message>
        <source>burst</source>
        <translation>突发</translation>
    </message>
    <message>
        <source>other error</source>
        <translation>其他错误</translation>
    </message>
    <message>
        <source>Time</source>
        <translation>时间</translation>
    </message>
    <message>
        <source>Severity</source>
        <translation>级别</translation>
    </message>
    <message>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>Group</source>
        <translation>组</translation>
    </message>
    <message>
        <source>429 class</source>
        <translation>429 类别</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>消息</translation>
    </message>
</context>
<context>
    <name>tg::ui::EventLogWidget</name>
    <message>
        <source>All groups</source>
        <translation>所有组</translation>
    </message>
    <message>
        <source>All kinds</source>
        <translation>所有类型</translation>
    </message>
    <message>
        <source>Info and up</source>
        <translation>信息及以上</translation>
    </message>
    <message>
        <source>Warnings and errors</source>
        <translation>警告和错误</translation>
    </message>
    <message>
        <source>Errors</source>
        <translation>错误</translation>
    </message>
    <message>
        <source>Fil&amp;ter:</source>
        <translation>筛选(&amp;T)：</translation>
    </message>
    <message>
        <source>Events</source>
        <translation>事件</translation>
    </message>
    <message>
        <source>Filter by group</source>
        <translation>按分组筛选</translation>
    </message>
    <message>
        <source>Filter by kind</source>
        <translation>按类型筛选</translation>
    </message>
    <message>
        <source>Filter by severity</source>
        <translation>按严重程度筛选</translation>
    </message>
</context>
<context>
    <name>tg::ui::FleetWidget</name>
    <message>
        <source>Instance</source>
        <translation>实例</translation>
    </message>
    <message>
        <source>Mode</source>
        <translation>模式</translation>
    </message>
    <message>
        <source>OK/s</source>
        <translation>成功/秒</translation>
    </message>
    <message>
        <source>Share</source>
        <translation>份额</translation>
    </message>
    <message>
        <source>In flight</source>
        <translation>在途</translation>
    </message>
    <message>
        <source>429s</source>
        <translation>429 数</translation>
    </message>
    <message numerus="yes">
        <source>Shared quota: %1 · %n instance(s)</source>
        <translation>
            <numerusform>共享配额：%1 · %n 个实例</numerusform>
        </translation>
    </message>
    <message>
        <source>–</source>
        <translation>–</translation>
    </message>
    <message>
        <source> (this)</source>
        <translation>（本实例）</translation>
    </message>
    <message>
        <source>Redis: %1</source>
        <translation>Redis：%1</translation>
    </message>
    <message>
        <source> · Redis unreachable or refusing, this instance takes 1/%1 of each shared limit</source>
        <translation> · Redis 不可达或拒绝，本实例使用每个共享限额的 1/%1</translation>
    </message>
</context>
<context>
    <name>tg::ui::GroupCardWidget</name>
    <message>
        <source>Group %1</source>
        <translation>组 %1</translation>
    </message>
    <message>
        <source>remaining –</source>
        <translation>剩余 –</translation>
    </message>
    <message>
        <source>reset in</source>
        <translation>距重置</translation>
    </message>
    <message>
        <source>req/s</source>
        <translation>请求/秒</translation>
    </message>
    <message>
        <source>429/s</source>
        <translation>429/秒</translation>
    </message>
    <message>
        <source>p95</source>
        <translation>p95</translation>
    </message>
    <message>
        <source>in flight</source>
        <translation>在途</translation>
    </message>
    <message>
        <source>queue</source>
        <translation>队列</translation>
    </message>
    <message>
        <source>%1 / %2 requests</source>
        <translation>%1 / %2 请求</translation>
    </message>
    <message>
        <source>%1 / %2 tokens</source>
        <translation>%1 / %2 令牌</translation>
    </message>
    <message>
        <source>%1 requests left, limit unknown</source>
        <translation>剩余 %1 请求，上限未知</translation>
    </message>
    <message>
        <source>remaining unknown</source>
        <translation>剩余未知</translation>
    </message>
    <message>
        <source>tokens %1 / %2</source>
        <translation>令牌 %1 / %2</translation>
    </message>
    <message>
        <source>reset in %1</source>
        <translation>距重置 %1</translation>
    </message>
    <message>
        <source>429/s %1 (%2%)</source>
        <translation>429/秒 %1（%2%）</translation>
    </message>
    <message>
        <source>req/s %1</source>
        <translation>请求/秒 %1</translation>
    </message>
    <message>
        <source>429/s –</source>
        <translation>429/秒 –</translation>
    </message>
    <message>
        <source>req/s –</source>
        <translation>请求/秒 –</translation>
    </message>
    <message>
        <source>p95 %1 ms</source>
        <translation>p95 %1 毫秒</translation>
    </message>
    <message>
        <source>in flight %1 / %2</source>
        <translation>在途 %1 / %2</translation>
    </message>
    <message>
        <source>queue P0 %1 · P1 %2 · P2 %3</source>
        <translation>队列 P0 %1 · P1 %2 · P2 %3</translation>
    </message>
    <message>
        <source>group paused</source>
        <translation>组已暂停</translation>
    </message>
    <message>
        <source>%1 paused</source>
        <translation>%1 已暂停</translation>
    </message>
    <message>
        <source>draining</source>
        <translation>排空中</translation>
    </message>
    <message>
        <source>waiting: %1</source>
        <translation>等待：%1</translation>
    </message>
    <message>
        <source>%1: breaker %2, %3</source>
        <translation>%1：熔断器%2，%3</translation>
    </message>
    <message>
        <source>rate ceiling %1</source>
        <translation>速率上限 %1</translation>
    </message>
    <message>
        <source>breaker %1</source>
        <translation>熔断器 %1</translation>
    </message>
</context>
<context>
    <name>tg::ui::MainWindow</name>
    <message>
        <source>Tollgate</source>
        <translation>Tollgate</translation>
    </message>
    <message>
        <source>Groups</source>
        <translation>分组</translation>
    </message>
    <message>
        <source>Controls</source>
        <translation>控制</translation>
    </message>
    <message>
        <source>Workload</source>
        <translation>工作负载</translation>
    </message>
    <message>
        <source>Events</source>
        <translation>事件</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation>语言(&amp;L)</translation>
    </message>
    <message>
        <source>Language: %1 from the next start</source>
        <translation>语言：下次启动起使用 %1</translation>
    </message>
    <message>
        <source>Mode</source>
        <translation>模式</translation>
    </message>
    <message>
        <source>Replay</source>
        <translation>回放</translation>
    </message>
    <message>
        <source>Replay recorded history: incidents, any time range, what-if re-drive</source>
        <translation>回放记录的历史：事故、任意时间范围、假设推演</translation>
    </message>
    <message>
        <source>Tollgate – replay</source>
        <translation>Tollgate – 回放</translation>
    </message>
    <message>
        <source>Upstream: %1</source>
        <translation>上游：%1</translation>
    </message>
    <message>
        <source>–</source>
        <translation>–</translation>
    </message>
    <message>
        <source>Engine: %1 · in flight %2 / %3</source>
        <translation>引擎：%1 · 在途 %2 / %3</translation>
    </message>
    <message>
        <source>Last snapshot: just now</source>
        <translation>最新快照：刚刚</translation>
    </message>
    <message>
        <source>Last snapshot: %1 s ago ⚠</source>
        <translation>最新快照：%1 秒前 ⚠</translation>
    </message>
    <message>
        <source>Engine: –</source>
        <translation>引擎：–</translation>
    </message>
    <message>
        <source>Last snapshot: none</source>
        <translation>最新快照：无</translation>
    </message>
    <message>
        <source>History: off</source>
        <translation>历史：关闭</translation>
    </message>
    <message>
        <source>History: %1 (%2)</source>
        <translation>历史：%1（%2）</translation>
    </message>
    <message>
        <source>size unknown</source>
        <translation>大小未知</translation>
    </message>
    <message>
        <source>&amp;Notifications</source>
        <translation>通知(&amp;N)</translation>
    </message>
    <message>
        <source>No system tray here: the status bar shows the state</source>
        <translation>此处没有系统托盘：状态栏显示状态</translation>
    </message>
    <message>
        <source>&amp;Controls</source>
        <translation>控制(&amp;C)</translation>
    </message>
    <message>
        <source>Pause or resume P%1 on all groups</source>
        <translation>在所有分组暂停或恢复 P%1</translation>
    </message>
    <message>
        <source>Alerts: %1</source>
        <translation>告警：%1</translation>
    </message>
    <message>
        <source>No system tray: alerts show here only</source>
        <translation>没有系统托盘：告警只显示在这里</translation>
    </message>
    <message>
        <source>Fleet</source>
        <translation>集群</translation>
    </message>
    <message>
        <source>Last 5 minutes</source>
        <translation>最近 5 分钟</translation>
    </message>
    <message>
        <source>Last 15 minutes</source>
        <translation>最近 15 分钟</translation>
    </message>
    <message>
        <source>Last hour</source>
        <translation>最近 1 小时</translation>
    </message>
    <message>
        <source>Last 6 hours</source>
        <translation>最近 6 小时</translation>
    </message>
    <message>
        <source>Li&amp;ve</source>
        <translation>实时(&amp;V)</translation>
    </message>
    <message>
        <source>&amp;Replay</source>
        <translation>回放(&amp;R)</translation>
    </message>
</context>
<context>
    <name>tg::ui::RedrawStats</name>
    <message>
        <source>%1 ms/redraw, %2% UI thread busy</source>
        <translation>每次重绘 %1 毫秒，UI 线程繁忙 %2%</translation>
    </message>
</context>
<context>
    <name>tg::ui::ReplayPanelWidget</name>
    <message>
        <source>#</source>
        <translation>#</translation>
    </message>
    <message>
        <source>Duration</source>
        <translation>时长</translation>
    </message>
    <message>
        <source>Groups</source>
        <translation>组</translation>
    </message>
    <message>
        <source>Peak 429/s</source>
        <translation>429/秒峰值</translation>
    </message>
    <message>
        <source>429s</source>
        <translation>429 数</translation>
    </message>
    <message>
        <source>Shed</source>
        <translation>丢弃</translation>
    </message>
    <message>
        <source>Operator actions</source>
        <translation>操作员操作</translation>
    </message>
    <message>
        <source>Show range</source>
        <translation>显示范围</translation>
    </message>
    <message>
        <source>Whole file</source>
        <translation>整个文件</translation>
    </message>
    <message>
        <source>Previous incident</source>
        <translation>上一个事故</translation>
    </message>
    <message>
        <source>Step back 5 s</source>
        <translation>后退 5 秒</translation>
    </message>
    <message>
        <source>Play / pause</source>
        <translation>播放 / 暂停</translation>
    </message>
    <message>
        <source>Step forward 5 s</source>
        <translation>前进 5 秒</translation>
    </message>
    <message>
        <source>Next incident</source>
        <translation>下一个事故</translation>
    </message>
    <message>
        <source>PNG…</source>
        <translation>PNG…</translation>
    </message>
    <message>
        <source>CSV…</source>
        <translation>CSV…</translation>
    </message>
    <message>
        <source>Report…</source>
        <translation>报告…</translation>
    </message>
    <message>
        <source>What-if…</source>
        <translation>假设推演…</translation>
    </message>
    <message>
        <source>Re-drive this stretch&apos;s workload against its upstream with other settings</source>
        <translation>用其他设置，把这段时间的工作负载重新发往它的上游</translation>
    </message>
    <message>
        <source>From</source>
        <translation>从</translation>
    </message>
    <message>
        <source>to</source>
        <translation>到</translation>
    </message>
    <message>
        <source>Export:</source>
        <translation>导出：</translation>
    </message>
    <message>
        <source>Export charts to</source>
        <translation>图表导出到</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <source>Export data</source>
        <translation>导出数据</translation>
    </message>
    <message>
        <source>CSV (*.csv)</source>
        <translation>CSV 文件 (*.csv)</translation>
    </message>
    <message>
        <source>Export report</source>
        <translation>导出报告</translation>
    </message>
    <message>
        <source>Markdown (*.md)</source>
        <translation>Markdown 文件 (*.md)</translation>
    </message>
    <message>
        <source>Reasons: %1</source>
        <translation>原因：%1</translation>
    </message>
    <message>
        <source>Start</source>
        <translation>开始</translation>
    </message>
    <message>
        <source>Incidents</source>
        <translation>事故</translation>
    </message>
    <message>
        <source>Replay speed</source>
        <translation>回放速度</translation>
    </message>
    <message>
        <source>To</source>
        <translation>至</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <source>Play</source>
        <translation>播放</translation>
    </message>
</context>
<context>
    <name>tg::ui::ReplayScrubWidget</name>
    <message>
        <source>Playhead: click or drag, or arrow keys (a second; Page Up/Down a tenth; Home/End). Red: incidents; blue: operator actions</source>
        <translation>播放头：点击或拖动，或用方向键（每次一秒；Page Up/Down 每次十分之一；Home/End）。红色：事故；蓝色：操作员操作</translation>
    </message>
    <message>
        <source>Playhead</source>
        <translation>播放头</translation>
    </message>
</context>
<context>
    <name>tg::ui::SessionWorkloadController</name>
    <message>
        <source>synthetic profile (config)</source>
        <translation>合成负载（配置）</translation>
    </message>
    <message>
        <source>no such profile: %1</source>
        <translation>没有这个负载：%1</translation>
    </message>
</context>
<context>
    <name>tg::ui::TimeChartWidget</name>
    <message numerus="yes">
        <source>%n more not closed</source>
        <translation>
            <numerusform>另有 %n 个未关闭</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n closed</source>
        <translation>
            <numerusform>%n 个关闭</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n without data</source>
        <translation>
            <numerusform>%n 个无数据</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n more</source>
        <translation>
            <numerusform>另有 %n 个</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>tg::ui::TranslationLoader</name>
    <message>
        <source>System language</source>
        <translation>跟随系统</translation>
    </message>
</context>
<context>
    <name>tg::ui::WhatIfDialog</name>
    <message>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <source>What-if re-drive</source>
        <translation>假设推演</translation>
    </message>
    <message>
        <source>Time compression: the re-drive runs this many times faster than the recording</source>
        <translation>时间压缩：推演比录制快这么多倍</translation>
    </message>
    <message>
        <source>as recorded</source>
        <translation>同录制</translation>
    </message>
    <message>
        <source>Group</source>
        <translation>组</translation>
    </message>
    <message>
        <source>Concurrency</source>
        <translation>并发</translation>
    </message>
    <message>
        <source>Bucket fraction</source>
        <translation>令牌桶比例</translation>
    </message>
    <message>
        <source>Breaker share</source>
        <translation>熔断失败比例</translation>
    </message>
    <message>
        <source>Breaker min calls</source>
        <translation>熔断最少调用数</translation>
    </message>
    <message>
        <source>Cannot read the range: %1</source>
        <translation>无法读取该时间范围：%1</translation>
    </message>
    <message>
        <source>Speed</source>
        <translation>速度</translation>
    </message>
    <message>
        <source>Global concurrency</source>
        <translation>全局并发</translation>
    </message>
    <message>
        <source>Concurrency × (all groups)</source>
        <translation>并发倍数（所有组）</translation>
    </message>
    <message>
        <source>Paused tiers</source>
        <translation>暂停的优先级</translation>
    </message>
    <message>
        <source>Cancel run</source>
        <translation>取消运行</translation>
    </message>
    <message>
        <source>429s rec.</source>
        <translation>429 数（录制）</translation>
    </message>
    <message>
        <source>429s what-if</source>
        <translation>429 数（推演）</translation>
    </message>
    <message>
        <source>Shed rec.</source>
        <translation>丢弃（录制）</translation>
    </message>
    <message>
        <source>Shed what-if</source>
        <translation>丢弃（推演）</translation>
    </message>
    <message>
        <source>Done rec. (s)</source>
        <translation>完成用时（录制，秒）</translation>
    </message>
    <message>
        <source>Done what-if (s)</source>
        <translation>完成用时（推演，秒）</translation>
    </message>
    <message>
        <source>P0 p50 rec.</source>
        <translation>P0 p50（录制）</translation>
    </message>
    <message>
        <source>P0 p50 what-if</source>
        <translation>P0 p50（推演）</translation>
    </message>
    <message>
        <source>P0 p95 rec.</source>
        <translation>P0 p95（录制）</translation>
    </message>
    <message>
        <source>P0 p95 what-if</source>
        <translation>P0 p95（推演）</translation>
    </message>
    <message>
        <source>Re-driving %1 s of history at %2×…</source>
        <translation>正在以 %2× 速度推演 %1 秒的历史…</translation>
    </message>
    <message>
        <source>Failed: %1</source>
        <translation>失败：%1</translation>
    </message>
    <message>
        <source>Done in %1 s wall at %2×%3</source>
        <translation>完成：实际用时 %1 秒，速度 %2×%3</translation>
    </message>
    <message>
        <source> (cancelled)</source>
        <translation>（已取消）</translation>
    </message>
    <message>
        <source>%1 · recorded</source>
        <translation>%1 · 录制</translation>
    </message>
    <message>
        <source>%1 · what-if</source>
        <translation>%1 · 推演</translation>
    </message>
    <message>
        <source>Lines: %1</source>
        <translation>曲线：%1</translation>
    </message>
    <message>
        <source>total</source>
        <translation>合计</translation>
    </message>
    <message>
        <source>this recording predates recorded engine settings: re-driven on the defaults</source>
        <translation>此录制早于引擎设置的记录：按默认设置重放</translation>
    </message>
    <message>
        <source>Groups</source>
        <translation>分组</translation>
    </message>
    <message>
        <source>%1, %2</source>
        <translation>%1，%2</translation>
    </message>
    <message>
        <source>Recorded and what-if</source>
        <translation>录制与假设</translation>
    </message>
</context>
<context>
    <name>tg::ui::WorkloadPanelWidget</name>
    <message>
        <source>&amp;Start</source>
        <translation>开始(&amp;S)</translation>
    </message>
    <message>
        <source>&amp;Open JSONL…</source>
        <translation>打开 JSONL(&amp;O)…</translation>
    </message>
    <message>
        <source>Pa&amp;use</source>
        <translation>暂停(&amp;U)</translation>
    </message>
    <message>
        <source>Cance&amp;l</source>
        <translation>取消(&amp;L)</translation>
    </message>
    <message>
        <source>Open workload</source>
        <translation>打开工作负载</translation>
    </message>
    <message>
        <source>JSON lines (*.jsonl *.ndjson);;All files (*)</source>
        <translation>JSON Lines 文件 (*.jsonl *.ndjson);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Res&amp;ume</source>
        <translation>恢复(&amp;U)</translation>
    </message>
    <message>
        <source>%1 / %2</source>
        <translation>%1 / %2</translation>
    </message>
    <message>
        <source>%1 done</source>
        <translation>已完成 %1</translation>
    </message>
    <message>
        <source> (paused)</source>
        <translation>（已暂停）</translation>
    </message>
    <message>
        <source>%1 ok, %2 failed</source>
        <translation>成功 %1，失败 %2</translation>
    </message>
    <message>
        <source>%1/s</source>
        <translation>%1/秒</translation>
    </message>
    <message>
        <source>results: %1</source>
        <translation>结果：%1</translation>
    </message>
    <message>
        <source>error: %1</source>
        <translation>错误：%1</translation>
    </message>
</context>
</TS>
