import EventBusBroker
print("eventbus \(BrokerVersion.string)")
