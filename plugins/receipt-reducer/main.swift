// The `receipt-reducer` plugin: folds the ingress stage into watermarks and counts.
import EventBusPlugin
import ReceiptReducer

/// The options of every plugin, `--push-counts-up-to` and `--retain-messages`.
struct ReceiptReducerOptions: PluginArguments {
    @OptionGroup var plugin: PluginOptions

    @Option(help: """
        Send each member their new counts (notification.message_new) on every message in \
        channels of at most this many members; 0 (the default) sends none.
        """)
    var pushCountsUpTo = 0

    @Option(help: """
        Keep at least this many of each channel's newest messages and forget older ones \
        (acks naming them are rejected unknown_message; counts stay exact); 0 keeps every \
        message. (docs/events.md rule 25)
        """)
    var retainMessages = ReceiptReducer.defaultRetention
}

await PluginMain.run(ReceiptReducerOptions.self) { options in
    ReceiptReducerPlugin(pushCountsUpTo: max(0, options.pushCountsUpTo), retainMessages: max(0, options.retainMessages))
}
