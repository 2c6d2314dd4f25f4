"""Trainer integrations. They reach the service only through the public client,
`rlvr.RewardClient` (`rlvr.client`); `make lint` checks that."""
