import EventBusPlugin

await PluginMain.run(ReceiptReducerPlugin())
