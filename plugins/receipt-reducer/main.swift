// The `receipt-reducer` plugin: folds the ingress stage into watermarks and counts.
import EventBusPlugin

/// The options of every plugin, and `--push-counts-up-to`.
struct ReceiptReducerOptions: PluginArguments {
    @OptionGroup var plugin: PluginOptions

    @Option(help: """
        Send each member their new counts (notification.message_new) on every message in \
        channels of at most this many members; 0 (the default) sends none.
        """)
    var pushCountsUpTo = 0
}

await PluginMain.run(ReceiptReducerOptions.self) { options in
    ReceiptReducerPlugin(pushCountsUpTo: max(0, options.pushCountsUpTo))
}
