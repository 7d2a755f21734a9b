/* The Cray XT models' NIC (docs/simulate.md, "Calibration": why a NIC that
 * slows while many messages arrive): a SimGrid plugin that scripts/simulate
 * preloads into smpimain where the platform asks for it.
 *
 * A node's injection link (NODE-inj: one capacity for its sends and receives,
 * SHARED) keeps its bandwidth while the node receives at most mpimb/nic_above
 * messages at once, and drops to mpimb/nic_busy_bw while it receives more:
 * the SeaStar's embedded processor handles every message's Portals events, so
 * many arriving at once slow all of the node's traffic, its sends included.
 * (SimGrid's IB model, which the XT models used before, penalises a message by
 * its sender's and its receiver's counts alone: a phase of the phased method,
 * where a node only sends or only receives, then costs as much as a whole
 * exchange.)
 *
 * SimGrid 3.32's public API tells a plugin a message's hosts when its action
 * is made (the bandwidth-factor callback, called inside the making) and the
 * action when it ends (Link::on_communication_state_change), never both at
 * once: so each message's destination is kept from the callback and given to
 * the action the model made for it, the newest of the model's started actions
 * not yet seen, at the next callback or end (one action is made per callback,
 * in order).  Properties are read from the platform's zones (the XT graphs'
 * one zone); a platform without mpimb/nic_busy_bw leaves the plugin idle. */
#include <simgrid/kernel/resource/Action.hpp>
#include <simgrid/kernel/resource/Model.hpp>
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/s4u.hpp>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace {

namespace sg4 = simgrid::s4u;
using simgrid::kernel::resource::Action;

struct Nic {
    sg4::Link* link;
    double nominal;   // the link's own bandwidth, B/s
    int arriving = 0; // messages under way to the node
};

struct Model {
    double busy = 0;  // B/s while more than `above` messages arrive
    int above = 2;
    std::vector<Nic> nics;
    std::unordered_map<const sg4::Host*, int> nic_of;  // a host's node
    std::unordered_map<const Action*, int> dest;       // a message's destination node
    simgrid::kernel::resource::Model* network = nullptr;
    int unclaimed = -1; // the destination of the message whose action is being made (-1: none)
};
Model model;

[[noreturn]] void fail(const std::string& what)
{
    std::fprintf(stderr, "mpimb NIC model: %s\n", what.c_str());
    std::exit(2);
}

/* "206MBps" (SimGrid's bandwidth units, decimal) -> B/s; 0 when not one */
double bandwidth(const std::string& s)
{
    static const std::vector<std::pair<std::string, double>> units = {
        {"GBps", 1e9}, {"MBps", 1e6}, {"kBps", 1e3}, {"Bps", 1}};
    for (const auto& [unit, scale] : units) {
        if (s.size() > unit.size() && s.compare(s.size() - unit.size(), unit.size(), unit) == 0) {
            char* end = nullptr;
            std::string num = s.substr(0, s.size() - unit.size());
            double v = std::strtod(num.c_str(), &end);
            return end && *end == '\0' && v > 0 ? v * scale : 0;
        }
    }
    return 0;
}

void arrive(int node, int change)
{
    Nic& n = model.nics[node];
    bool was = n.arriving > model.above;
    n.arriving += change;
    bool is = n.arriving > model.above;
    if (was != is)
        n.link->set_bandwidth(is ? model.busy : n.nominal);
}

/* the action made for the unclaimed message: the newest started one not yet seen */
void claim()
{
    if (model.unclaimed < 0)
        return;
    auto* started = model.network->get_started_action_set();
    for (auto it = started->rbegin(); it != started->rend(); ++it) {
        if (model.dest.emplace(&*it, model.unclaimed).second) {
            model.unclaimed = -1;
            return;
        }
    }
}

double on_message(double, const sg4::Host*, const sg4::Host* dst, const std::vector<sg4::Link*>&,
                  const std::unordered_set<sg4::NetZone*>&)
{
    claim();
    auto it = model.nic_of.find(dst);
    if (it == model.nic_of.end())
        fail("no NIC for host " + dst->get_name());
    arrive(it->second, +1);
    model.unclaimed = it->second;
    return 1.0; // no correction factor (the models' smpi/bw-factor 1)
}

void on_state(simgrid::kernel::resource::NetworkAction& na, Action::State)
{
    // NetworkAction (SimGrid's internal headers) is an Action by single inheritance
    const auto& a = reinterpret_cast<const Action&>(na);
    if (a.get_state() == Action::State::STARTED || a.get_state() == Action::State::INITED)
        return;
    int node;
    if (auto it = model.dest.find(&a); it != model.dest.end()) {
        node = it->second;
        model.dest.erase(it);
    } else if (model.unclaimed >= 0) { // ended before any other message: the one unclaimed
        node = model.unclaimed;
        model.unclaimed = -1;
    } else {
        return; // not a message this model counted
    }
    arrive(node, -1);
}

const char* property(const sg4::NetZone* z, const char* key)
{
    if (const char* v = z->get_property(key))
        return v;
    for (const auto* c : z->get_children())
        if (const char* v = property(c, key))
            return v;
    return nullptr;
}

void start()
{
    auto* e = sg4::Engine::get_instance();
    const sg4::NetZone* root = e->get_netzone_root();
    const char* busy = property(root, "mpimb/nic_busy_bw");
    if (!busy)
        return; // not a platform of this model
    model.busy = bandwidth(busy);
    if (model.busy <= 0)
        fail(std::string("mpimb/nic_busy_bw must be a bandwidth such as 206MBps, got '") + busy + "'");
    if (const char* above = property(root, "mpimb/nic_above")) {
        char* end = nullptr;
        long v = std::strtol(above, &end, 10);
        if (*above == '\0' || *end != '\0' || v < 0 || v > 1000000)
            fail(std::string("mpimb/nic_above must be a count of messages, got '") + above + "'");
        model.above = static_cast<int>(v);
    }
    std::unordered_map<std::string, int> index;
    for (auto* h : e->get_all_hosts()) {
        const char* node = h->get_property("mpimb/node"); // a host per process (XT4): its node
        std::string name = node ? node : h->get_name();
        auto [it, fresh] = index.try_emplace(name, static_cast<int>(model.nics.size()));
        if (fresh) {
            sg4::Link* link = e->link_by_name_or_null(name + "-inj");
            if (!link)
                fail("no injection link " + name + "-inj for host " + h->get_name());
            model.nics.push_back({link, link->get_bandwidth()});
        }
        model.nic_of[h] = it->second;
    }
    auto* intf = root->get_network_model();
    model.network = dynamic_cast<simgrid::kernel::resource::Model*>(intf);
    if (!model.network)
        fail("SimGrid's network model is not one this plugin knows");
    try {
        intf->set_bw_factor_cb(on_message);
    } catch (const std::invalid_argument&) { // SimGrid takes no callback beside a configured factor
        fail("smpi/bw-factor or network/bandwidth-factor is set: the NIC model sets the bandwidth factor itself");
    }
    sg4::Link::on_communication_state_change_cb(on_state);
}

/* every message counted at its start is uncounted at its end: a node still
 * counting arrivals when the simulation ends means the model went wrong */
void check_at_end()
{
    size_t left = 0;
    for (const Nic& n : model.nics)
        left += n.arriving != 0;
    if (left || !model.dest.empty() || model.unclaimed >= 0)
        std::fprintf(stderr, "mpimb NIC model: FAILED CHECK: %zu node(s) still counting arriving messages "
                             "at the end (%zu messages unmatched): its figures are not the model's\n",
                     left, model.dest.size() + (model.unclaimed >= 0));
}

const bool registered = (sg4::Engine::on_platform_created_cb(start),
                         sg4::Engine::on_simulation_end_cb(check_at_end), true);

} // namespace
