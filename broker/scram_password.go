package broker

// CheckSCRAMPassword reports whether pass is user's password under one of
// the SCRAM credentials the broker keeps (the start-up users and those set
// through AlterUserScramCredentials): the HTTP basic authentication of
// the schema registry, Redpanda's model.
func (b *Broker) CheckSCRAMPassword(user, pass string) bool { return b.scram.CheckPassword(user, pass) }
