package broker

import (
	"context"

	"github.com/minikafka/minikafka/protocol"
)

// handler serves one request whose version is already known to be within
// the API's range.
type handler func(b *Broker, ctx context.Context, req *protocol.Request) protocol.Reply

// api is one row of the table that drives dispatch, version checks and the
// ApiVersions answer.
type api struct {
	key      int16
	min, max int16
	fn       handler
}

// apis is THE table, sorted by key (TestAPITable checks it and that no max
// exceeds what kmsg can encode). Minimums follow Kafka 4.x (KIP-896 dropped
// the oldest versions) except where older clients still need more.
var apis []api

// apiIndex maps a key to its row.
var apiIndex map[int16]*api

// The table is filled in init because its handlers refer back to it
// (ApiVersions lists it), which a package-level initializer cannot.
func init() {
	apis = []api{
		{0, 3, 13, (*Broker).handleProduce},                                              // v3+: only v2 record batches
		{1, 4, 18, (*Broker).handleFetch},                                                // v4+: v2 record batches, LSO
		{2, 1, 11, (*Broker).handleListOffsets},                                          // v0's multi-offset shape dropped as in Kafka 4
		{3, 0, 13, (*Broker).handleMetadata},                                             //
		{8, 0, 10, topicsAuthorized(opRead, serveAllowed, (*Broker).handleOffsetCommit)}, // v10: topic ids
		{9, 0, 10, (*Broker).handleOffsetFetch},                                          // v10: topic ids
		{10, 0, 6, (*Broker).handleFindCoordinator},
		{11, 0, 9, (*Broker).handleJoinGroup},
		{12, 0, 4, (*Broker).handleHeartbeat},
		{13, 0, 5, (*Broker).handleLeaveGroup},
		{14, 0, 5, (*Broker).handleSyncGroup},
		{15, 0, 6, (*Broker).handleDescribeGroups},
		{16, 0, 5, (*Broker).handleListGroups},
		{17, 0, 1, (*Broker).handleSaslHandshake},  // v0: raw tokens follow (protocol's SASLRaw)
		{18, 0, 4, (*Broker).handleApiVersions},    // v5 (KIP-1242) is not in Kafka 4.1
		{19, 0, 7, (*Broker).handleCreateTopics},   //
		{20, 0, 6, (*Broker).handleDeleteTopics},   //
		{21, 0, 2, (*Broker).handleDeleteRecords},  //
		{22, 0, 5, (*Broker).handleInitProducerID}, //
		{23, 0, 4, (*Broker).handleOffsetForLeaderEpoch},
		{24, 0, 5, topicsAuthorized(opWrite, allOrNothing, (*Broker).handleAddPartitionsToTxn)}, // v4+ is broker-to-broker
		{25, 0, 4, (*Broker).handleAddOffsetsToTxn},
		{26, 0, 5, (*Broker).handleEndTxn},
		{27, 1, 2, (*Broker).handleWriteTxnMarkers},                                         // v0 dropped in Kafka 4
		{28, 0, 6, topicsAuthorized(opRead, serveAllowed, (*Broker).handleTxnOffsetCommit)}, // v6: topic ids
		{29, 0, 3, (*Broker).handleDescribeAcls},                                            // SECURITY_DISABLED without Config.Authorizer, as Kafka
		{30, 0, 3, (*Broker).handleCreateAcls},                                              //
		{31, 0, 3, (*Broker).handleDeleteAcls},                                              //
		{32, 0, 4, (*Broker).handleDescribeConfigs},                                         //
		{33, 0, 2, (*Broker).handleAlterConfigs},                                            //
		{34, 1, 2, (*Broker).handleAlterReplicaLogDirs},                                     // v0 dropped in Kafka 4
		{35, 1, 4, (*Broker).handleDescribeLogDirs},                                         // v0 dropped in Kafka 4; v5 (cordoning) not in 4.1
		{36, 0, 2, (*Broker).handleSaslAuthenticate},
		{37, 0, 3, (*Broker).handleCreatePartitions},      //
		{38, 1, 3, (*Broker).handleCreateDelegationToken}, // v0 dropped in Kafka 4
		{39, 1, 2, (*Broker).handleRenewDelegationToken},
		{40, 1, 2, (*Broker).handleExpireDelegationToken},
		{41, 1, 3, (*Broker).handleDescribeDelegationToken},
		{42, 0, 2, (*Broker).handleDeleteGroups},
		{43, 0, 2, (*Broker).handleElectLeaders},
		{44, 0, 1, (*Broker).handleIncrementalAlterConfigs},
		{45, 0, 1, (*Broker).handleAlterPartitionAssignments},
		{46, 0, 0, (*Broker).handleListPartitionReassignments},
		{47, 0, 0, topicsAuthorized(opRead, serveAllowed, (*Broker).handleOffsetDelete)},
		{48, 0, 1, (*Broker).handleDescribeClientQuotas},
		{49, 0, 1, (*Broker).handleAlterClientQuotas},
		{50, 0, 0, (*Broker).handleDescribeUserScramCredentials},
		{51, 0, 0, (*Broker).handleAlterUserScramCredentials},
		{55, 0, 2, (*Broker).handleDescribeQuorum},
		{57, 0, 2, (*Broker).handleUpdateFeatures},
		{60, 0, 2, (*Broker).handleDescribeCluster},
		{61, 0, 0, topicsAuthorized(opRead, serveAllowed, (*Broker).handleDescribeProducers)},
		{65, 0, 0, (*Broker).handleDescribeTransactions},
		{66, 0, 2, (*Broker).handleListTransactions},
		{68, 0, 1, (*Broker).handleConsumerGroupHeartbeat},
		{69, 0, 1, (*Broker).handleConsumerGroupDescribe},
		{71, 0, 0, (*Broker).handleGetTelemetrySubscriptions},
		{72, 0, 0, (*Broker).handlePushTelemetry},
		{74, 0, 1, (*Broker).handleListConfigResources},
		{75, 0, 0, (*Broker).handleDescribeTopicPartitions},
		{76, 1, 1, (*Broker).handleShareGroupHeartbeat}, // v0 was KIP-932's early access
		{77, 1, 1, (*Broker).handleShareGroupDescribe},
		{78, 1, 2, topicsAuthorized(opRead, serveAllowed, (*Broker).handleShareFetch)},
		{79, 1, 2, topicsAuthorized(opRead, serveAllowed, (*Broker).handleShareAcknowledge)},
		{90, 0, 1, (*Broker).handleDescribeShareGroupOffsets},
		{91, 0, 0, topicsAuthorized(opRead, serveAllowed, (*Broker).handleAlterShareGroupOffsets)},
		{92, 0, 0, topicsAuthorized(opRead, serveAllowed, (*Broker).handleDeleteShareGroupOffsets)},
	}
	apiIndex = make(map[int16]*api, len(apis))
	for i := range apis {
		apiIndex[apis[i].key] = &apis[i]
	}
}

func lookupAPI(key int16) *api { return apiIndex[key] }
